package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingConfigurationException;
import dev.fencing.store.OutsideTransactionException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;
import org.springframework.transaction.support.ResourceHolderSupport;
import org.springframework.transaction.support.ResourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A store given the transaction manager of another DataSource (two databases; a {@code @Primary} DataSource and a
 * {@code @Primary} manager that do not match, as a new user's trial had them) fails when built: its checks would run in
 * autocommit on a connection of their own, and in the trial a stale token's write committed after a newer one's.
 * The check also refuses, on the call, a transaction that holds no connection of the store's DataSource.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class TransactionManagerMismatchTest {

    private HikariDataSource accounts;
    private HikariDataSource ledger;
    private final String table = Database.uniqueTable("tm_mismatch");

    @BeforeAll
    void pools() {
        accounts = Database.POSTGRESQL.newPool(2);
        ledger = Database.MARIADB.newPool(2);
    }

    @AfterAll
    void close() {
        new JdbcTemplate(ledger).execute("DROP TABLE IF EXISTS " + table);
        accounts.close();
        ledger.close();
    }

    @Test
    void aManagerOfAnotherDataSourceFailsTheBuildNamingBoth() {
        DataSourceTransactionManager accountsManager = new DataSourceTransactionManager(accounts);
        String never = Database.uniqueTable("tm_never");

        assertThatThrownBy(() -> JdbcFenceStore.builder(ledger).table(never).createTableIfMissing(true)
                .transactionManager(accountsManager).build())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("table '" + never + "'")
                .hasMessageContaining("manages DataSource HikariDataSource 'fencing-test-postgresql' "
                        + "(jdbc:postgresql://127.0.0.1:5432/test)")
                .hasMessageContaining("not the store's DataSource HikariDataSource 'fencing-test-mariadb' "
                        + "(jdbc:mariadb://127.0.0.1:3306/test)")
                .hasMessageContaining("transaction manager of its own DataSource");
        assertThat(new JdbcTemplate(ledger).queryForObject("SELECT COUNT(*) FROM information_schema.tables "
                + "WHERE table_name = ?", Integer.class, never)).as("nothing created").isZero();
    }

    @Test
    void theManagerOfItsOwnDataSourceAlsoThroughATransactionAwareProxyIsAccepted() {
        DataSourceTransactionManager ledgerManager = new DataSourceTransactionManager(ledger);
        assertThat(JdbcFenceStore.builder(ledger).table(table).transactionManager(ledgerManager).build()).isNotNull();
        assertThat(JdbcFenceStore.builder(new TransactionAwareDataSourceProxy(ledger)).table(table)
                .transactionManager(ledgerManager).build()).isNotNull();
        assertThat(JdbcFenceStore.builder(ledger).table(table)
                .transactionManager(new DataSourceTransactionManager(new TransactionAwareDataSourceProxy(ledger)))
                .build()).isNotNull();
    }

    @Test
    void aManagerThatExposesNoDataSourceFailsTheBuild() {
        assertThatThrownBy(() -> JdbcFenceStore.builder(ledger).table(table)
                .transactionManager(new FactoryManager(null)).build())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining(FactoryManager.class.getName())
                .hasMessageContaining("binds no JDBC connection");
        assertThatThrownBy(() -> JdbcFenceStore.builder(ledger).table(table)
                .transactionManager(new FactoryManager(accounts)).build())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("not the store's DataSource");
    }

    /**
     * A manager whose transactions are found by a factory of their own (as JPA's are by its entity manager factory)
     * and expose the store's DataSource, but whose transaction here bound no connection of it: the check refuses
     * rather than run in autocommit, and writes nothing.
     */
    @Test
    void aTransactionHoldingNoConnectionOfTheStoresDataSourceIsRefusedOnTheCall() {
        JdbcFenceStore store = JdbcFenceStore.builder(ledger).table(table).createTableIfMissing(true)
                .transactionManager(new FactoryManager(ledger)).build();
        store.verify();
        FencingToken token = new FencingToken("ledger", 5, "holder");
        AtomicBoolean ran = new AtomicBoolean();

        assertThatThrownBy(() -> new TransactionTemplate(new FactoryManager(ledger)).execute(status -> {
            try {
                return store.fence("ledger", token, () -> {
                    ran.set(true);
                    return null;
                });
            } catch (RuntimeException e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        })).isInstanceOf(OutsideTransactionException.class)
                .hasMessageContaining("holds no connection of the store's DataSource");
        assertThat(ran).isFalse();
        assertThat(new JdbcFenceAdmin(store).maxSeen("ledger")).as("nothing checked").isEmpty();
    }

    /** Binds only a holder under its factory, as a JPA manager with no connection of the DataSource would. */
    static final class FactoryManager extends AbstractPlatformTransactionManager implements ResourceTransactionManager {
        private static final Object FACTORY = new Object();
        private final DataSource dataSource;

        FactoryManager(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        public DataSource getDataSource() {
            return dataSource;
        }

        @Override
        public Object getResourceFactory() {
            return FACTORY;
        }

        @Override
        protected Object doGetTransaction() {
            return new Object();
        }

        @Override
        protected boolean isExistingTransaction(Object transaction) {
            return TransactionSynchronizationManager.hasResource(FACTORY);
        }

        @Override
        protected void doBegin(Object transaction, TransactionDefinition definition) {
            TransactionSynchronizationManager.bindResource(FACTORY, new ResourceHolderSupport() { });
        }

        @Override
        protected void doCommit(DefaultTransactionStatus status) {
        }

        @Override
        protected void doRollback(DefaultTransactionStatus status) {
        }

        @Override
        protected void doCleanupAfterCompletion(Object transaction) {
            TransactionSynchronizationManager.unbindResource(FACTORY);
        }
    }
}
