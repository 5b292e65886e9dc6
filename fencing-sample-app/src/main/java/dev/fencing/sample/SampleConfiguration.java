package dev.fencing.sample;

import dev.fencing.issuer.TokenIssuer;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.spring.EnableFencing;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * The annotation path on the sample's database: {@code @EnableFencing} with the database fence store, a database
 * lease as the lock service (lease time from the options), and the given meter registry. Expects a
 * {@link SampleDatabase}, {@link Options} and {@link MeterRegistry} registered by the caller.
 */
@Configuration(proxyBeanMethods = false)
@EnableFencing
public class SampleConfiguration {

    @Bean
    PlatformTransactionManager transactionManager(SampleDatabase db) {
        return db.transactions;
    }

    @Bean
    JdbcFenceStore fenceStore(SampleDatabase db) {
        return db.fence;
    }

    @Bean
    TokenIssuer tokenIssuer(SampleDatabase db, Options options, MeterRegistry registry) {
        return JdbcTokenIssuer.builder(db.dataSource).table(db.leaseTable).createTableIfMissing(true)
                .leaseTime(options.lease()).meterRegistry(registry).build();
    }

    @Bean
    AccountRepository accountRepository(SampleDatabase db) {
        return new AccountRepository(db);
    }

    @Bean
    AccountService accountService() {
        return new AccountService();
    }
}
