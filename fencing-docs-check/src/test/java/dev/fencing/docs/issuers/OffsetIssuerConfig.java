package dev.fencing.docs.issuers;

import dev.fencing.issuer.IssuerBase;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.jdbc.JdbcFenceAdmin;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcIssuerBase;
import dev.fencing.zookeeper.ZooKeeperTokenIssuer;
import io.micrometer.core.instrument.MeterRegistry;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;

/** docs/issuers.md: the offset without the starter. IssuersTest starts it on ZooKeeper and H2. */
@Configuration
public class OffsetIssuerConfig {

    // tag::offset-issuer[]
    @Bean(destroyMethod = "close")
    ZooKeeperTokenIssuer zooKeeperIssuer(CuratorFramework curator, MeterRegistry registry) {
        return new ZooKeeperTokenIssuer(curator, "/fencing/locks", registry);
    }

    @Bean
    @Primary // the issuer the fence uses: ZooKeeper's tokens plus the base
    OffsetTokenIssuer tokenIssuer(ZooKeeperTokenIssuer zooKeeper, DataSource dataSource, JdbcFenceStore fences) {
        IssuerBase bases = new JdbcIssuerBase(dataSource, "fencing_issuer_base");
        // stores the base under "zk-2026" on the first start (after checking it is above the fence table's highest
        // max_seen); every later start must be configured with the same base
        return OffsetTokenIssuer.establish(zooKeeper, bases, "zk-2026", 1_000_000_000L, new JdbcFenceAdmin(fences));
    }
    // end::offset-issuer[]
}
