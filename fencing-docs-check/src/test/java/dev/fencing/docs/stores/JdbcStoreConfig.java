package dev.fencing.docs.stores;

import dev.fencing.jdbc.JdbcFenceStore;
import java.time.Duration;
import javax.sql.DataSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;

/** docs/stores.md: the database store with every builder option at its default. Started by StoresTest. */
@Configuration
public class JdbcStoreConfig {

    // tag::jdbc-store[]
    @Bean
    JdbcFenceStore fenceStore(DataSource dataSource, PlatformTransactionManager transactionManager) {
        return JdbcFenceStore.builder(dataSource)
                .transactionManager(transactionManager) // the one your repositories use
                .table("fencing_max_seen")              // default; letters, digits, _ and an optional schema
                .createTableIfMissing(false)            // default: create it with the script below
                .lockTimeout(Duration.ofSeconds(5))     // default: how long a check waits for a held fence row
                .checkAtCommit(false)                   // default: check before the body (PostgreSQL: opt in below)
                .build();                               // checks the name, detects the dialect; the table comes later
    }
    // end::jdbc-store[]
}
