package dev.fencing.docs.stores;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.docs.Databases;
import dev.fencing.jdbc.JdbcFenceAdmin;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.FencedCall;
import dev.fencing.token.FencingToken;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

class StoresTest {

    @Configuration
    static class Database {
        @Bean DataSource dataSource() { return Databases.h2("stores", "schema-h2.sql"); }
        @Bean PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
    }

    @Test
    void theDocumentedStoreStartsVerifiesAndFences() throws Throwable {
        try (var context = new AnnotationConfigApplicationContext(JdbcStoreConfig.class, Database.class)) {
            JdbcFenceStore store = context.getBean(JdbcFenceStore.class);
            AtomicInteger writes = new AtomicInteger();
            FencedCall<Integer> write = writes::incrementAndGet;

            store.fence("accounts:42", new FencingToken("accounts:42", 34, "client-7"), write);
            assertThatThrownBy(() -> store.fence("accounts:42", new FencingToken("accounts:42", 33, "client-6"), write))
                    .isInstanceOf(StaleTokenException.class);
            assertThat(writes).hasValue(1);

            // tag::jdbc-admin[]
            JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
            // never lowers; joins the caller's transaction, or runs in one of its own
            admin.raiseFloor("accounts:42", 907);
            OptionalLong maxSeen = admin.maxSeen("accounts:42"); // empty when the resource never accepted a token
            // end::jdbc-admin[]
            assertThat(maxSeen).hasValue(907);
            assertThatThrownBy(() ->
                    store.fence("accounts:42", new FencingToken("accounts:42", 907, "client-8"), write))
                    .isInstanceOf(DuplicateTokenException.class);
            assertThat(admin.maxSeen("accounts:43")).isEmpty();
        }
    }

    @Configuration
    static class TwoDatabases {
        @Bean DataSource accountsDataSource() { return Databases.h2("accounts", "schema-h2.sql"); }
        @Bean DataSource ledgerDataSource() { return Databases.h2("ledger", "schema-h2.sql"); }
        @Bean PlatformTransactionManager accountsTransactionManager(
                @org.springframework.beans.factory.annotation.Qualifier("accountsDataSource") DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
        @Bean PlatformTransactionManager ledgerTransactionManager(
                @org.springframework.beans.factory.annotation.Qualifier("ledgerDataSource") DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
    }

    @Test
    void theTwoDatabasesStoreRoutesEachResourceToItsOwnTableAndRefusesACrossedManager() throws Throwable {
        try (var context = new AnnotationConfigApplicationContext(TwoDatabasesConfig.class, TwoDatabases.class)) {
            dev.fencing.store.RoutingFenceStore routing = context.getBean(dev.fencing.store.RoutingFenceStore.class);
            routing.verify();
            FencedCall<Integer> write = () -> 1;
            routing.fence("ledger:7", new FencingToken("ledger:7", 5, "h"), write);
            JdbcFenceStore ledger = (JdbcFenceStore) routing.storeFor("ledger:7");
            JdbcFenceStore accounts = (JdbcFenceStore) routing.storeFor("accounts:7");
            assertThat(new JdbcFenceAdmin(ledger).maxSeen("ledger:7")).hasValue(5);
            assertThat(new JdbcFenceAdmin(accounts).maxSeen("ledger:7")).as("the other database").isEmpty();
            assertThat(routing.unguarded("orders")).contains("routes: [accounts, ledger]");
            // the ledger's DataSource with the accounts' manager: refused when built
            assertThatThrownBy(() -> JdbcFenceStore.builder(context.getBean("ledgerDataSource", DataSource.class))
                    .transactionManager(context.getBean("accountsTransactionManager",
                            PlatformTransactionManager.class)).build())
                    .hasMessageContaining("not the store's DataSource");
        }
    }
}
