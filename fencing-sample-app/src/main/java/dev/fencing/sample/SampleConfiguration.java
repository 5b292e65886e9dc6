package dev.fencing.sample;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Duration;

/**
 * Embedded defaults: an in-memory lock service whose leases last {@link #LEASE}, tokens continuing after 32 as in
 * the canonical trace, an in-memory fence store, and a simple meter registry.
 */
@Configuration(proxyBeanMethods = false)
@EnableFencing
public class SampleConfiguration {

    static final Duration LEASE = Duration.ofMillis(500);

    @Bean
    TokenIssuer tokenIssuer() {
        return new InMemoryTokenIssuer(LEASE, 32);
    }

    @Bean
    InMemoryFenceStore fenceStore() {
        return new InMemoryFenceStore();
    }

    @Bean
    MeterRegistry meterRegistry() {
        return new SimpleMeterRegistry();
    }

    @Bean
    AccountRepository accountRepository() {
        return new AccountRepository();
    }

    @Bean
    AccountService accountService() {
        return new AccountService();
    }
}
