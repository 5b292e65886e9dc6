package dev.fencing.docs.issuers;

import dev.fencing.redisson.RedissonTokenIssuer;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.redisson.api.RedissonClient;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * docs/issuers.md: the Redisson issuer. Compiled here for the snippet; building it contacts Redis (its startup
 * checks), which fencing-redisson's own tests do against a real server.
 */
@Configuration
public class RedissonIssuerConfig {

    // tag::redisson-issuer[]
    @Bean(destroyMethod = "close")
    RedissonTokenIssuer tokenIssuer(RedissonClient redisson, MeterRegistry registry) {
        return RedissonTokenIssuer.builder(redisson)   // refuses to start on a Redis without appendonly yes
                .prefix("fencing:lock:")
                .leaseTime(Duration.ofSeconds(30))     // or none: Redisson's watchdog renews the lock
                .meterRegistry(registry)
                .build();
    }
    // end::redisson-issuer[]
}
