package dev.fencing.docs.stores;

import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.store.RoutingFenceStore;
import javax.sql.DataSource;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;

/** docs/stores.md, "Two databases": a fence table in each, routed per resource. Started by StoresTest. */
@Configuration
public class TwoDatabasesConfig {

    // tag::two-databases[]
    @Bean
    RoutingFenceStore fenceStore(@Qualifier("accountsDataSource") DataSource accounts,
                                 @Qualifier("accountsTransactionManager") PlatformTransactionManager accountsTx,
                                 @Qualifier("ledgerDataSource") DataSource ledger,
                                 @Qualifier("ledgerTransactionManager") PlatformTransactionManager ledgerTx) {
        return RoutingFenceStore.builder()
                // each store on its own DataSource, with that DataSource's transaction manager
                .route("accounts", JdbcFenceStore.builder(accounts).transactionManager(accountsTx).build())
                .route("ledger", JdbcFenceStore.builder(ledger).transactionManager(ledgerTx).build())
                .build(); // no fallback: a @Fenced resource without a route fails startup
    }
    // end::two-databases[]
}
