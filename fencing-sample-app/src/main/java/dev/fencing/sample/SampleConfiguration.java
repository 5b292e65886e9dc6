package dev.fencing.sample;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.spring.EnableFencing;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.transaction.PlatformTransactionManager;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.UUID;

/**
 * Embedded defaults, no server needed: an H2 database in memory holding both the protected data and the fence
 * table (checked by {@link JdbcFenceStore} in the write's transaction), an in-memory lock service whose leases last
 * {@link #LEASE} with tokens continuing after 32 as in the canonical trace, and a simple meter registry.
 */
@Configuration(proxyBeanMethods = false)
@EnableFencing
public class SampleConfiguration {

    static final Duration LEASE = Duration.ofMillis(500);

    @Bean
    DataSource dataSource() {
        return new SimpleDriverDataSource(new org.h2.Driver(),
                "jdbc:h2:mem:fencing-sample-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", "");
    }

    @Bean
    PlatformTransactionManager transactionManager(DataSource dataSource) {
        return new DataSourceTransactionManager(dataSource);
    }

    @Bean
    JdbcFenceStore fenceStore(DataSource dataSource, PlatformTransactionManager transactionManager) {
        return JdbcFenceStore.builder(dataSource).transactionManager(transactionManager)
                .createTableIfMissing(true).build();
    }

    @Bean
    TokenIssuer tokenIssuer() {
        return new InMemoryTokenIssuer(LEASE, 32);
    }

    @Bean
    MeterRegistry meterRegistry() {
        return new SimpleMeterRegistry();
    }

    @Bean
    AccountRepository accountRepository(DataSource dataSource) {
        return new AccountRepository(dataSource);
    }

    @Bean
    AccountService accountService() {
        return new AccountService();
    }
}
