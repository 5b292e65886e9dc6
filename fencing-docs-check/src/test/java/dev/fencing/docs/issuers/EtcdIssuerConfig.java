package dev.fencing.docs.issuers;

import dev.fencing.etcd.EtcdTokenIssuer;
import io.etcd.jetcd.Client;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * docs/issuers.md: the etcd issuer. IssuersTest creates it (the constructor does not connect); acquiring against a
 * real etcd is fencing-etcd's own test.
 */
@Configuration
public class EtcdIssuerConfig {

    // tag::etcd-issuer[]
    @Bean(destroyMethod = "close")
    EtcdTokenIssuer tokenIssuer(Client etcd, MeterRegistry registry) {
        return new EtcdTokenIssuer(etcd, "http://etcd-1:2379,...", "/fencing/locks/", Duration.ofSeconds(10), registry);
    }
    // end::etcd-issuer[]
}
