package dev.fencing.docs.issuers;

import dev.fencing.zookeeper.ZooKeeperTokenIssuer;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** docs/issuers.md: the ZooKeeper issuer. IssuersTest starts it against Curator's test server. */
@Configuration
public class ZooKeeperIssuerConfig {

    // tag::zookeeper-issuer[]
    @Bean(destroyMethod = "close")
    ZooKeeperTokenIssuer tokenIssuer(CuratorFramework curator, MeterRegistry registry) {
        return new ZooKeeperTokenIssuer(curator, "/fencing/locks", registry);
    }
    // end::zookeeper-issuer[]
}
