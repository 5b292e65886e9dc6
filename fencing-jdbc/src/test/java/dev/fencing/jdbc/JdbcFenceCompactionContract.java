package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.retention.CompactionResult;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.store.sql.FenceSql;
import dev.fencing.testsupport.FenceCompactionContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The compaction contract on a real database, a table of its own per test; plus what only the table shows: the
 * floor is a row of the same table, keyed by its family and U+001F, and no resource row of a folded family is left.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcFenceCompactionContract extends FenceCompactionContract {

    private HikariDataSource dataSource;
    private JdbcTemplate jdbc;

    abstract Database database();

    /** The pool the stores under test run on: the database's own, unless a mode needs a connection property. */
    HikariDataSource newPool(int size) {
        return database().newPool(size);
    }

    @BeforeAll
    void openPool() {
        dataSource = newPool(10);
        jdbc = new JdbcTemplate(dataSource);
    }

    @AfterAll
    void closePool() {
        dataSource.close();
    }

    /** Further configuration of the stores; none by default. */
    JdbcFenceStore.Builder configure(JdbcFenceStore.Builder builder) {
        return builder;
    }

    /** The stores' lock wait bound. */
    Duration lockTimeout() {
        return Duration.ofMillis(500);
    }

    @Override
    protected Subject newSubject() {
        JdbcFenceStore store = configure(JdbcFenceStore.builder(dataSource).table(Database.uniqueTable("compact"))
                .createTableIfMissing(true).lockTimeout(lockTimeout())).build();
        store.verify();
        return new Subject(store, new JdbcFenceAdmin(store));
    }

    @Override
    protected void closeSubject(Subject subject) {
        jdbc.execute("DROP TABLE IF EXISTS " + ((JdbcFenceStore) subject.store()).table());
    }

    /**
     * With a bound on one advance, a resource without a row is bounded from its family floor, by the same statement,
     * in either mode: a token more than the bound above the floor is out of range, one within it accepted.
     */
    @Test
    void theBoundOnOneAdvanceAppliesFromTheFloor() throws Throwable {
        Subject plain = newSubject();
        String table = ((JdbcFenceStore) plain.store()).table();
        try {
            String r = "bounded:1";
            plain.store().fence(r, new dev.fencing.token.FencingToken(r, 500, "h"), () -> null);
            Thread.sleep(20);
            assertThat(plain.compaction().compact(Duration.ZERO, 10, IssuerFloors.ONE_SEQUENCE).folded())
                    .isEqualTo(1);
            JdbcFenceStore bounded = configure(JdbcFenceStore.builder(dataSource).table(table).maxAdvance(100))
                    .build();
            String other = "bounded:2";
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> bounded.fence(other,
                            new dev.fencing.token.FencingToken(other, 601, "h"), () -> null))
                    .isInstanceOf(dev.fencing.rule.OutOfRangeTokenException.class);
            assertThat(bounded.fence(other, new dev.fencing.token.FencingToken(other, 600, "h"), () -> "ok"))
                    .isEqualTo("ok");
        } finally {
            closeSubject(plain);
        }
    }

    /**
     * The store's own compaction (what the starter schedules) goes through one admin built with the store, not a new
     * one per call, and folds and reports the floor as that admin does.
     */
    @Test
    void theStoreCompactsThroughTheOneAdminBuiltWithIt() throws Throwable {
        Subject s = newSubject();
        JdbcFenceStore store = (JdbcFenceStore) s.store();
        try {
            JdbcFenceAdmin admin = store.admin();
            String r = "once:1";
            store.fence(r, new dev.fencing.token.FencingToken(r, 77, "h"), () -> null);
            Thread.sleep(20);
            assertThat(store.compact(Duration.ZERO, 10, IssuerFloors.ONE_SEQUENCE).folded()).isEqualTo(1);
            assertThat(store.familyFloor("once")).hasValue(77);
            assertThat(store.admin()).isSameAs(admin);
            assertThat(admin.familyFloor("once")).hasValue(77);
        } finally {
            closeSubject(s);
        }
    }

    /**
     * A compaction that starts while a fenced transaction has advanced an idle row and not committed (the compactor
     * read it idle at its old max_seen) never leaves the resource judged against less than the advanced max_seen: a
     * zombie's token between the old and the new value is refused after the compaction, and after the next one.
     */
    @Test
    @Timeout(60)
    void aRowAdvancedByATransactionInFlightWhenCompactionStartsIsNeverJudgedBelowItsNewMaxSeen() throws Throwable {
        Subject s = newSubject();
        JdbcFenceStore store = (JdbcFenceStore) s.store();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            String r = "inflight:1";
            store.fence(r, new FencingToken(r, 10, "old"), () -> null);
            Thread.sleep(20);
            TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
            AtomicReference<Future<CompactionResult>> compaction = new AtomicReference<>();
            tx.executeWithoutResult(status -> {
                try {
                    store.fence(r, new FencingToken(r, 20, "live"), () -> null);
                    compaction.set(pool.submit(() ->
                            s.compaction().compact(Duration.ZERO, 10, IssuerFloors.ONE_SEQUENCE)));
                    Thread.sleep(300);   // lets the compaction read the row idle and wait on the lock; not asserted
                } catch (Throwable e) {
                    throw new IllegalStateException(e);
                }
            });
            try {
                compaction.get().get(30, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                // the lock not granted in time: tried again below
                assertThat(e.getCause()).isInstanceOf(CannotAcquireLockException.class);
            }
            assertThat(refusal(store, r, 15, "zombie")).isInstanceOf(StaleTokenException.class);
            assertThat(refusal(store, r, 20, "zombie")).isInstanceOf(TokenRejectedException.class);
            Thread.sleep(20);
            s.compaction().compact(Duration.ZERO, 10, IssuerFloors.ONE_SEQUENCE);
            assertThat(s.compaction().familyFloor("inflight")).hasValue(20);
            assertThat(refusal(store, r, 19, "zombie")).isInstanceOf(StaleTokenException.class);
            assertThat(refusal(store, r, 21, "next")).isNull();
        } finally {
            pool.shutdownNow();
            closeSubject(s);
        }
    }

    private static Throwable refusal(JdbcFenceStore store, String r, long value, String holder) {
        try {
            store.fence(r, new FencingToken(r, value, holder), () -> null);
            return null;
        } catch (Throwable e) {
            return e;
        }
    }

    /** The example of docs/stores.md, run: nothing idle for 30 days in a fresh table, no floor. */
    @Test
    void theDocsExampleRuns() {
        Subject s = newSubject();
        JdbcFenceStore store = (JdbcFenceStore) s.store();
        try {
            // tag::compact[]
            JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
            CompactionResult done =
                    admin.compact(Duration.ofDays(30), 1000, IssuerFloors.ONE_SEQUENCE); // ZooKeeper, etcd
            OptionalLong floor = admin.familyFloor("accounts");   // empty until a resource of the family was folded
            // end::compact[]
            assertThat(done).isEqualTo(CompactionResult.NONE);
            assertThat(floor).isEmpty();
        } finally {
            closeSubject(s);
        }
    }

    @Test
    void theFloorIsARowOfTheSameTableAndTheFoldedRowsAreGone() throws Throwable {
        Subject s = newSubject();
        try {
            String table = ((JdbcFenceStore) s.store()).table();
            for (int i = 0; i < 3; i++) {
                String r = "orders:eu:" + i;
                s.store().fence(r, new dev.fencing.token.FencingToken(r, 5 + i, "h"), () -> null);
            }
            Thread.sleep(20);
            assertThat(s.compaction().compact(Duration.ZERO, 2, dev.fencing.retention.IssuerFloors.ONE_SEQUENCE)
                    .folded()).isEqualTo(3);
            List<String> rows = jdbc.queryForList("SELECT resource FROM " + table, String.class);
            assertThat(rows).containsExactly("orders:eu" + FenceSql.FLOOR_MARKER);
            assertThat(jdbc.queryForObject("SELECT max_seen FROM " + table, Long.class)).isEqualTo(7);
            assertThat(s.compaction().familyFloor("orders:eu")).hasValue(7);
            assertThat(s.compaction().familyFloor("orders")).isEmpty();
        } finally {
            closeSubject(s);
        }
    }
}
