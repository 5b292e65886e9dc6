package dev.fencing.jdbc;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A fenced call whose body writes in a transaction of its own ({@code REQUIRES_NEW}) commits that write apart from
 * the fence: if the fence's transaction then rolls back, max_seen goes back while the write stays. Such a transaction,
 * committed with no check in it, is named at WARNING; a fenced call inside it, a read-only one and one that rolls
 * back are not. On H2, in tables of its own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OwnTransactionInFenceTest {

    private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private final String fenceTable = "own_fence_" + suffix;
    private final String rows = "own_rows_" + suffix;
    private HikariDataSource pool;
    private DataSourceTransactionManager manager;
    private JdbcFenceStore store;
    private JdbcTemplate jdbc;
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(TransactionOrigins.class);

    @BeforeAll
    void start() {
        pool = Database.H2.newPool(4);
        manager = new DataSourceTransactionManager(pool);
        TransactionOrigins.listenTo(manager, "'audit'");
        store = JdbcFenceStore.builder(pool).table(fenceTable).transactionManager(manager).createTableIfMissing(true)
                .build();
        jdbc = new JdbcTemplate(pool);
        jdbc.execute("CREATE TABLE " + rows + " (v VARCHAR(64))");
    }

    @AfterAll
    void stop() {
        jdbc.execute("DROP TABLE " + rows);
        jdbc.execute("DROP TABLE " + fenceTable);
        pool.close();
    }

    @BeforeEach
    void listen() {
        appender.list.clear();
        appender.start();
        logger.addAppender(appender);
    }

    @AfterEach
    void stopListening() {
        logger.detachAppender(appender);
    }

    private TransactionTemplate own(boolean readOnly) {
        TransactionTemplate template = new TransactionTemplate(manager);
        template.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        template.setReadOnly(readOnly);
        return template;
    }

    @Test
    void aWriteCommittedInATransactionOfItsOwnInsideTheFenceIsNamed() throws Throwable {
        FencingToken token = new FencingToken("ledger:1", 5, "holder");
        // the fence's transaction rolls back (the body fails after the write): the own transaction's row stays
        assertThatThrownBy(() -> store.fence("ledger:1", token, () -> {
            own(false).executeWithoutResult(s -> jdbc.update("INSERT INTO " + rows + " VALUES ('written')"));
            throw new IllegalStateException("a later step failed");
        })).isInstanceOf(IllegalStateException.class);
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + rows + " WHERE v = 'written'", Integer.class))
                .isEqualTo(1);
        assertThat(store.fence("ledger:1", new FencingToken("ledger:1", 4, "older"), () -> "an older token"))
                .as("max_seen went back with the fence's transaction").isEqualTo("an older token");
        assertThat(appender.list).singleElement().satisfies(event -> {
            assertThat(event.getLevel()).isEqualTo(Level.WARN);
            assertThat(event.getFormattedMessage()).startsWith("A transaction of its own (REQUIRES_NEW) was begun "
                    + "by transaction manager 'audit' (DataSourceTransactionManager) inside the fenced call on "
                    + "resource 'ledger:1', and committed with no @Fenced check in it");
        });
    }

    @Test
    void aFencedCallInsideIt_aReadOnlyOneAndARolledBackOneAreNotNamed() throws Throwable {
        store.fence("audit:2", new FencingToken("audit:2", 5, "holder"), () -> {
            // a fenced call inside the transaction of its own checks there
            own(false).executeWithoutResult(s -> {
                try {
                    store.fence("audit:3", new FencingToken("audit:3", 5, "holder"),
                            () -> jdbc.update("INSERT INTO " + rows + " VALUES ('fenced')"));
                } catch (Throwable e) {
                    throw new AssertionError(e);
                }
            });
            own(true).executeWithoutResult(s -> jdbc.queryForObject("SELECT COUNT(*) FROM " + rows, Integer.class));
            own(false).executeWithoutResult(s -> {
                jdbc.update("INSERT INTO " + rows + " VALUES ('undone')");
                s.setRollbackOnly();
            });
            return null;
        });
        assertThat(appender.list).isEmpty();
        assertThat(TransactionOrigins.onThisThread()).isZero();
    }

    /**
     * A fenced call on the same resource in a transaction of its own, inside a fenced call's body, waits on the row its
     * own thread's suspended transaction holds: its busy refusal says so, not "another transaction" (a helper's trial,
     * with @Fenced on a repository fragment whose implementation had REQUIRES_NEW, looked for another writer).
     */
    @Test
    void aCheckWaitingOnItsOwnThreadsSuspendedTransactionSaysSo() throws Throwable {
        JdbcFenceStore quick = JdbcFenceStore.builder(pool).table(fenceTable).transactionManager(manager)
                .lockTimeout(java.time.Duration.ofMillis(500)).build();
        FencingToken token = new FencingToken("self:1", 5, "holder");
        assertThatThrownBy(() -> quick.fence("self:1", token, () -> own(false).execute(s -> {
            try {
                return quick.fence("self:1", token, () -> "inner");
            } catch (RuntimeException e) {
                throw e;
            } catch (Throwable e) {
                throw new AssertionError(e);
            }
        }))).isInstanceOf(FenceBusyException.class)
                .hasMessageContaining("held by this thread's own transaction, suspended while it runs the body of a "
                        + "fenced call on the same resource")
                .hasMessageNotContaining("held by another transaction");
    }
}
