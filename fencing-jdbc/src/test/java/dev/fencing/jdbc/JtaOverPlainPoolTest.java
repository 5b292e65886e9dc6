package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.store.OutsideTransactionException;
import dev.fencing.token.FencingToken;
import jakarta.transaction.Status;
import jakarta.transaction.UserTransaction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.jta.JtaTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A JTA transaction manager binds no DataSource, so the store joins its transactions as they are. Over a DataSource
 * not enlisted in them (a plain pool: its connections stay in autocommit) the check statement would commit at once and
 * release the fence row, and a call checked with 33 then wrote after one accepted with 34 (a red-team review). The
 * store refuses a check on a connection in autocommit inside such a transaction, whether the caller's or its own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class JtaOverPlainPoolTest {

    /** A JTA UserTransaction that keeps a status per thread and enlists nothing (as a pool outside JTA sees it). */
    static final class ThreadStatusUserTransaction implements UserTransaction {
        private final ThreadLocal<Integer> status = ThreadLocal.withInitial(() -> Status.STATUS_NO_TRANSACTION);

        @Override
        public void begin() {
            status.set(Status.STATUS_ACTIVE);
        }

        @Override
        public void commit() {
            status.set(Status.STATUS_NO_TRANSACTION);
        }

        @Override
        public void rollback() {
            status.set(Status.STATUS_NO_TRANSACTION);
        }

        @Override
        public void setRollbackOnly() {
            status.set(Status.STATUS_MARKED_ROLLBACK);
        }

        @Override
        public int getStatus() {
            return status.get();
        }

        @Override
        public void setTransactionTimeout(int seconds) {
        }
    }

    private HikariDataSource pg;
    private JdbcTemplate jdbc;
    private JdbcFenceStore store;
    private TransactionTemplate jta;
    private final String fence = Database.uniqueTable("jta_plain_fence");
    private final String data = Database.uniqueTable("jta_plain_data");

    @BeforeAll
    void setUp() {
        pg = Database.POSTGRESQL.newPool(4);
        jdbc = new JdbcTemplate(pg);
        jdbc.execute(Database.POSTGRESQL.createDataTable(data));
        JtaTransactionManager manager = new JtaTransactionManager(new ThreadStatusUserTransaction());
        manager.afterPropertiesSet();
        store = JdbcFenceStore.builder(pg).transactionManager(manager).table(fence).createTableIfMissing(true)
                .lockTimeout(Duration.ofSeconds(2)).build();
        store.verifyTable();
        jta = new TransactionTemplate(manager);
    }

    @AfterAll
    void tearDown() {
        jdbc.execute("DROP TABLE IF EXISTS " + fence);
        jdbc.execute("DROP TABLE IF EXISTS " + data);
        pg.close();
    }

    private String fenced(String r, long value, CountDownLatch before, CountDownLatch after) {
        try {
            return jta.execute(status -> {
                try {
                    return store.fence(r, new FencingToken(r, value, "h" + value), () -> {
                        before.countDown();
                        after.await(5, TimeUnit.SECONDS);
                        jdbc.update("INSERT INTO " + data + " (k, token, v) VALUES (?, ?, ?)", r, value, "w");
                        return "w";
                    });
                } catch (RuntimeException e) {
                    throw e;
                } catch (Throwable e) {
                    throw new IllegalStateException(e);
                }
            });
        } catch (TokenRejectedException | ConcurrencyFailureException refused) {
            return "refused";
        } catch (OutsideTransactionException misconfigured) {
            return "misconfigured: " + misconfigured.getMessage();
        }
    }

    /** A store that opens the JTA transaction itself (no caller's) is refused alike: its check would commit at once. */
    @Test
    void aCheckInATransactionOfTheStoresOwnIsRefusedToo() {
        String r = "jta-plain-own";
        assertThatThrownBy(() -> store.fence(r, new FencingToken(r, 5, "h"), () -> "written"))
                .isInstanceOf(OutsideTransactionException.class).hasMessageContaining("autocommit");
        assertThat(new JdbcFenceAdmin(store).maxSeen(r)).isEmpty();
    }

    /**
     * The race that broke the ordering (33 checked, paused in its body; 34 checked and written; 33 written after):
     * neither call runs its body now, and nothing lands.
     */
    @Test
    void aWriteCheckedWith33NeverLandsAfterOneAcceptedWith34() throws Exception {
        String r = "jta-plain";
        CountDownLatch olderInBody = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<String> older = pool.submit(() -> fenced(r, 33, olderInBody, new CountDownLatch(0)));
            Future<String> newer = pool.submit(() -> fenced(r, 34, new CountDownLatch(1), new CountDownLatch(0)));
            String olderOutcome = older.get(20, TimeUnit.SECONDS);
            String newerOutcome = newer.get(20, TimeUnit.SECONDS);
            assertThat(olderInBody.getCount()).as("the older call's body never ran").isEqualTo(1);
            assertThat(List.of(olderOutcome, newerOutcome)).allSatisfy(outcome -> assertThat(outcome)
                    .startsWith("misconfigured: ").contains("autocommit", "Enlist", "'jta-plain'"));
            assertThat(jdbc.queryForList("SELECT token FROM " + data + " WHERE k = ?", Long.class, r))
                    .as("nothing written on a connection the check cannot hold").isEmpty();
            assertThat(new JdbcFenceAdmin(store).maxSeen(r)).isEmpty();
        } finally {
            pool.shutdownNow();
        }
    }
}
