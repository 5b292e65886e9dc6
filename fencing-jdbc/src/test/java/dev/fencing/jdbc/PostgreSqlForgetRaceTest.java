package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Forgetting a resource ({@code lowerMaxSeen(resource, 0)} deletes its row) while a check on it is in flight, on
 * PostgreSQL: the check must end judged against the family floor, as a check after the forget is, whatever it read
 * before the delete. The check statement reads the family floor, never whether the resource has a row: which path it
 * takes (the row's own max_seen, or the floor) is decided by the unique index when it inserts. So the forget needs
 * no lock beyond the row's, and a check waiting for the row, or one whose snapshot predates the forget (REPEATABLE
 * READ, SERIALIZABLE), is judged against the floor once the row is gone.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class PostgreSqlForgetRaceTest {

    private HikariDataSource pool;
    private JdbcTemplate jdbc;
    private HikariDataSource monitorPool;
    private JdbcTemplate monitor;
    private DataSourceTransactionManager tm;
    /** The table of the running test: one per test, so that a compaction folds only what the test made. */
    private String table;

    @BeforeAll
    void setUp() {
        pool = Database.POSTGRESQL.newPool(6);
        jdbc = new JdbcTemplate(pool);
        tm = new DataSourceTransactionManager(pool);
        monitorPool = Database.POSTGRESQL.newPool(1);
        monitor = new JdbcTemplate(monitorPool);
    }

    @AfterEach
    void dropTable() {
        jdbc.execute("DROP TABLE IF EXISTS " + table);
    }

    @AfterAll
    void tearDown() {
        pool.close();
        monitorPool.close();
    }

    private JdbcFenceStore store(boolean atCommit) {
        table = Database.uniqueTable("forget");
        JdbcFenceStore store = JdbcFenceStore.builder(pool).transactionManager(tm).table(table)
                .createTableIfMissing(true).checkAtCommit(atCommit).build();
        store.verify();
        return store;
    }

    private void fenced(JdbcFenceStore store, String resource, long token) {
        new TransactionTemplate(tm).executeWithoutResult(status -> {
            try {
                store.fence(resource, new FencingToken(resource, token, "h-" + token), () -> null);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        });
    }

    @ParameterizedTest(name = "checkAtCommit={0}")
    @ValueSource(booleans = {false, true})
    void aCheckOnARowBeingForgottenIsJudgedAgainstTheFamilyFloor(boolean atCommit) throws Exception {
        JdbcFenceStore store = store(atCommit);
        JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
        String family = "forget" + UUID.randomUUID().toString().replace("-", "");
        // the family floor: 900, from a folded resource
        fenced(store, family + ":old", 900);
        Thread.sleep(20);
        assertThat(admin.compact(Duration.ZERO, 10, IssuerFloors.ONE_SEQUENCE).folded()).isEqualTo(1);
        assertThat(admin.familyFloor(family)).hasValue(900);
        // the resource's own row, lowered to 100: 500 is above it and below the floor
        String r = family + ":1";
        fenced(store, r, 950);
        admin.lowerMaxSeen(r, 100);

        CompletableFuture<Throwable> zombie = new CompletableFuture<>();
        new TransactionTemplate(tm).executeWithoutResult(status -> {
            admin.lowerMaxSeen(r, 0); // forgets r: deleted in this transaction, not committed yet
            Thread check = new Thread(() -> zombie.complete(catchThrowable(() -> fenced(store, r, 500))));
            check.setDaemon(true);
            check.start();
            waitForALockWaiter();
        });

        Throwable outcome = zombie.get(30, TimeUnit.SECONDS);
        // after the forget r is judged against its family's floor: 500 is stale, and no row holds it
        assertThat(outcome).isInstanceOf(StaleTokenException.class);
        assertThat(jdbc.queryForList("SELECT max_seen FROM " + table + " WHERE resource = ?", Long.class, r))
                .doesNotContain(500L);
    }

    /**
     * A check in a transaction whose snapshot was taken before the forget committed still sees the forgotten row in
     * its reads; it must not take that as the row's being there.
     */
    @ParameterizedTest(name = "checkAtCommit={0}, isolation={1}")
    @CsvSource({"false, REPEATABLE_READ", "true, REPEATABLE_READ", "false, SERIALIZABLE", "true, SERIALIZABLE"})
    void aCheckWhoseSnapshotPredatesTheForgetIsJudgedAgainstTheFamilyFloor(boolean atCommit, String isolation)
            throws Exception {
        JdbcFenceStore store = store(atCommit);
        JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
        String family = "forget" + UUID.randomUUID().toString().replace("-", "");
        fenced(store, family + ":old", 900);
        Thread.sleep(20);
        // the family's floor, made by another instance's compaction: a store that compacted (or is told its table is
        // compacted) refuses checks above READ COMMITTED (PostgresSnapshotBeforeCompactionTest); the forget's race
        // is what this judges
        JdbcFenceStore compacting = JdbcFenceStore.builder(pool).transactionManager(tm).table(table).build();
        assertThat(new JdbcFenceAdmin(compacting).compact(Duration.ZERO, 10, IssuerFloors.ONE_SEQUENCE).folded())
                .isEqualTo(1);
        String r = family + ":1";
        fenced(store, r, 950);
        admin.lowerMaxSeen(r, 100);

        TransactionTemplate snapshotFirst = new TransactionTemplate(tm);
        snapshotFirst.setIsolationLevelName("ISOLATION_" + isolation);
        Throwable outcome = catchThrowable(() -> snapshotFirst.executeWithoutResult(status -> {
            // the transaction's snapshot, taken by its first query: r has its row, lowered to 100
            assertThat(jdbc.queryForObject("SELECT max_seen FROM " + table + " WHERE resource = ?", Long.class, r))
                    .isEqualTo(100L);
            // forgotten and committed by another transaction
            assertThat(CompletableFuture.supplyAsync(() -> admin.lowerMaxSeen(r, 0)).join()).isEqualTo(100L);
            try {
                store.fence(r, new FencingToken(r, 500, "h-500"), () -> null);
            } catch (RuntimeException e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }));

        // a zombie's 500 is stale against the floor of 900
        assertThat(outcome).isInstanceOf(StaleTokenException.class);
        assertThat(jdbc.queryForList("SELECT max_seen FROM " + table + " WHERE resource = ?", Long.class, r))
                .doesNotContain(500L);
    }

    /**
     * A reset to 0 waits only for the resource's own row: a fenced transaction on another resource of the table,
     * open meanwhile, neither holds it up nor is held up by it. Run in the caller's transaction, it puts back the
     * caller's lock wait bound.
     */
    @Test
    void aForgetDoesNotWaitForFencedTransactionsOnOtherResources() throws Exception {
        JdbcFenceStore store = store(false);
        JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
        String r = "forget:1";
        fenced(store, r, 10);
        try (HeldTransaction fencedElsewhere = HeldTransaction.open(tm, () -> fenced(store, "forget:2", 5))) {
            assertThat(CompletableFuture.supplyAsync(() -> admin.lowerMaxSeen(r, 0)).get(10, TimeUnit.SECONDS))
                    .isEqualTo(10L);
            assertThat(jdbc.queryForList("SELECT max_seen FROM " + table + " WHERE resource = ?", Long.class, r))
                    .isEmpty();
        }
        assertThatThrownBy(() -> admin.lowerMaxSeen("forget:misspelt", 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'forget:misspelt'");

        // in the caller's transaction, the reset's bound on its wait for the row is put back afterwards
        fenced(store, r, 20);
        String kept = new TransactionTemplate(tm).execute(status -> {
            jdbc.execute("SET LOCAL lock_timeout = '4321ms'");
            assertThat(admin.lowerMaxSeen(r, 0)).isEqualTo(20L);
            return jdbc.queryForObject("SHOW lock_timeout", String.class);
        });
        assertThat(kept).isEqualTo("4321ms");
    }

    /**
     * Until the check waits on a lock held by the forgetting transaction. Asked outside that transaction, on a
     * connection of its own: inside one, PostgreSQL answers from the statistics snapshot of its first read.
     */
    private void waitForALockWaiter() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            Long waiting = monitor.queryForObject("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    + " AND query LIKE ?", Long.class, "%INSERT INTO " + table + "%");
            if (waiting != null && waiting >= 1) {
                return;
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        throw new AssertionError("the check never waited on the forgotten row");
    }
}
