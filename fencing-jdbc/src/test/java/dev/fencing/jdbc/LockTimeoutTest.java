package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.store.FenceStore;
import dev.fencing.store.TransientFenceFailure;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A writer paused inside its fenced body holds the resource's fence row until it commits; every other writer of that
 * resource waits at most the store's lock wait bound and then fails as retryable and {@code busy}, naming the
 * resource, instead of waiting as long as the pause lasts. The bound covers the check statement only.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(90)
class LockTimeoutTest {

    private final Map<Database, HikariDataSource> pools = new EnumMap<>(Database.class);
    private final List<Runnable> cleanup = new ArrayList<>();

    private HikariDataSource pool(Database database) {
        return pools.computeIfAbsent(database, d -> d.newPool(6));
    }

    @AfterAll
    void close() {
        cleanup.forEach(Runnable::run);
        pools.values().forEach(HikariDataSource::close);
    }

    private JdbcFenceStore.Builder storeBuilder(Database database) {
        String table = Database.uniqueTable("fence");
        cleanup.add(() -> new JdbcTemplate(pool(database)).execute("DROP TABLE IF EXISTS " + table));
        return JdbcFenceStore.builder(pool(database)).table(table).createTableIfMissing(true);
    }

    /** Runs {@code store}'s check with token 34 and stays inside the fenced body until the returned latch opens. */
    private static CountDownLatch holdTheFenceRow(FenceStore store, String r, CompletableFuture<Void> done)
            throws InterruptedException {
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture.runAsync(() -> {
            try {
                store.fence(r, new FencingToken(r, 34, "paused"), () -> {
                    inside.countDown();
                    return release.await(60, TimeUnit.SECONDS);
                });
                done.complete(null);
            } catch (Throwable e) {
                done.completeExceptionally(e);
            }
        });
        assertThat(inside.await(30, TimeUnit.SECONDS)).isTrue();
        return release;
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aWriterBehindAPausedHolderIsBusyAfterTheDefaultBound(Database database) throws Throwable {
        JdbcFenceStore store = storeBuilder(database).build();
        String r = "busy-" + System.nanoTime();
        CompletableFuture<Void> holder = new CompletableFuture<>();
        CountDownLatch release = holdTheFenceRow(store, r, holder);
        Guarded guarded = new Guarded(store, r);
        long started = System.nanoTime();
        Throwable failure = catchThrowable(() -> guarded.call(new FencingToken(r, 35, "waiting"), () -> "written"));
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        release.countDown();
        holder.get(30, TimeUnit.SECONDS);

        assertThat(failure).isInstanceOf(CannotAcquireLockException.class)
                .isInstanceOf(TransientDataAccessException.class).hasMessageContaining(r);
        assertThat(((TransientFenceFailure) failure).reason()).isEqualTo(TransientFenceFailure.Reason.BUSY);
        assertThat(guarded.checks("busy")).isEqualTo(1);
        assertThat(guarded.checks("accepted") + guarded.checks("error")).isZero();
        assertThat(waited).isBetween(4_000L, 30_000L); // the 5 s default, generously
        // the holder committed; the waiting writer may retry now
        assertThat(guarded.call(new FencingToken(r, 35, "waiting"), () -> "written")).isEqualTo("written");
    }

    /**
     * A bound the databases cannot take (PostgreSQL's lock_timeout and H2's LOCK_TIMEOUT are an int of milliseconds)
     * is refused by the builder, naming it: it built, and then the table check failed saying the table was missing
     * or unusable and to create it (PostgreSQL, H2), or the builder threw a bare ArithmeticException (MariaDB, a
     * Duration past Long.MAX_VALUE ms). The largest bound they take works everywhere (from a red-team review).
     */
    @ParameterizedTest
    @EnumSource(Database.class)
    void aBoundTheDatabaseCannotTakeIsRefusedWhenBuilt(Database database) throws Throwable {
        for (Duration tooLong : List.of(Duration.ofMillis(Integer.MAX_VALUE + 1L), Duration.ofDays(30),
                Duration.ofSeconds(Long.MAX_VALUE))) {
            assertThat(catchThrowable(() -> storeBuilder(database).lockTimeout(tooLong)))
                    .isInstanceOf(dev.fencing.FencingConfigurationException.class)
                    .hasMessageContaining("lockTimeout").hasMessageContaining(tooLong.toString())
                    .hasMessageContaining(Integer.MAX_VALUE + " ms");
        }
        JdbcFenceStore longest = storeBuilder(database).lockTimeout(Duration.ofMillis(Integer.MAX_VALUE)).build();
        longest.verify();
        String r = "longest-" + System.nanoTime();
        assertThat(longest.fence(r, new FencingToken(r, 5, "a"), () -> "written")).isEqualTo("written");
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void theBoundIsConfigurableAndTheExceptionNamesTheResource(Database database) throws Throwable {
        JdbcFenceStore store = storeBuilder(database).lockTimeout(Duration.ofMillis(300)).build();
        assertThat(store.lockTimeout()).isEqualTo(Duration.ofMillis(300));
        String r = "busy-" + System.nanoTime();
        CompletableFuture<Void> holder = new CompletableFuture<>();
        CountDownLatch release = holdTheFenceRow(store, r, holder);
        long started = System.nanoTime();
        Throwable failure = catchThrowable(() -> store.fence(r, new FencingToken(r, 35, "w"), () -> null));
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        release.countDown();
        holder.get(30, TimeUnit.SECONDS);
        assertThat(failure).isInstanceOfSatisfying(FenceBusyException.class, e -> {
            assertThat(e.resource()).isEqualTo(r);
            assertThat(e.presented().value()).isEqualTo(35);
            assertThat(e.reason()).isEqualTo(TransientFenceFailure.Reason.BUSY);
            assertThat(e.afterBody()).as("the check waited before the body ran").isFalse();
        }).hasMessageContaining("resource '" + r + "'").hasMessageContaining("300 ms")
                .as("the message travels to callers: no SQL text").hasMessageNotContaining("SQL [");
        // MariaDB bounds in whole seconds: 1 s
        assertThat(waited).isLessThan(4_000L);
    }

    /**
     * The bound covers the wait for the table's lock too, which the check takes before it runs (PostgreSQL: when it is
     * parsed, behind a DDL's or an operator's {@code LOCK TABLE}; MariaDB: the metadata lock, behind
     * {@code LOCK TABLES ... WRITE} or a DDL, bounded by {@code lock_wait_timeout}), though the caller's own bound
     * would wait for ever (PostgreSQL) or a day (MariaDB). H2 has no table lock a check waits for.
     */
    @ParameterizedTest
    @EnumSource(value = Database.class, names = {"POSTGRESQL", "MARIADB"})
    void theBoundCoversTheWaitForTheTablesLock(Database database) throws Throwable {
        JdbcFenceStore store = storeBuilder(database).lockTimeout(Duration.ofMillis(1000)).build();
        store.verify();
        String r = "orders:" + System.nanoTime();
        Throwable failure;
        long waited;
        try (java.sql.Connection locker = pool(database).getConnection();
             java.sql.Statement lock = locker.createStatement()) {
            if (database == Database.POSTGRESQL) {
                locker.setAutoCommit(false);
                lock.execute("LOCK TABLE " + store.table() + " IN SHARE ROW EXCLUSIVE MODE");
            } else {
                lock.execute("LOCK TABLES " + store.table() + " WRITE");
            }
            try {
                long started = System.nanoTime();
                failure = catchThrowable(() -> store.fence(r, new FencingToken(r, 1, "w"), () -> null));
                waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            } finally {
                if (database == Database.POSTGRESQL) {
                    locker.rollback();
                    locker.setAutoCommit(true);
                } else {
                    lock.execute("UNLOCK TABLES");
                }
            }
        }
        assertThat(failure).isInstanceOf(FenceBusyException.class).hasMessageContaining("resource '" + r + "'");
        assertThat(waited).isBetween(900L, 10_000L);
        // the table is free again: the same token is a first one
        store.fence(r, new FencingToken(r, 1, "w"), () -> null);
    }

    /**
     * The caller's statement timeout, shorter than the check's bound, cancels a check waiting for a held row: that is
     * {@code busy} (retry later), not a store failure, which would page whoever watches {@code error}.
     */
    @ParameterizedTest
    @EnumSource(value = Database.class, names = {"POSTGRESQL", "MARIADB"})
    void theCallersStatementTimeoutEndsAWaitingCheckAsBusy(Database database) throws Throwable {
        JdbcFenceStore store = storeBuilder(database).build(); // the 5 s default bound
        DataSourceTransactionManager tm = new DataSourceTransactionManager(pool(database));
        JdbcFenceStore joined = JdbcFenceStore.builder(pool(database)).transactionManager(tm).table(store.table())
                .build();
        JdbcTemplate jdbc = new JdbcTemplate(pool(database));
        String r = "timeout-" + System.nanoTime();
        CompletableFuture<Void> holder = new CompletableFuture<>();
        CountDownLatch release = holdTheFenceRow(store, r, holder);
        long started = System.nanoTime();
        Throwable failure = catchThrowable(() -> new TransactionTemplate(tm).executeWithoutResult(status -> {
            jdbc.execute(database == Database.POSTGRESQL ? "SET LOCAL statement_timeout = '500ms'"
                    : "SET SESSION max_statement_time = 0.5");
            try {
                joined.fence(r, new FencingToken(r, 35, "w"), () -> null);
            } catch (RuntimeException e) {
                throw e;
            } catch (Throwable e) {
                throw new AssertionError(e);
            } finally {
                if (database == Database.MARIADB) {
                    jdbc.execute("SET SESSION max_statement_time = DEFAULT");
                }
            }
        }));
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        release.countDown();
        holder.get(30, TimeUnit.SECONDS);
        assertThat(failure).isInstanceOfSatisfying(FenceBusyException.class,
                e -> assertThat(e.reason()).isEqualTo(TransientFenceFailure.Reason.BUSY))
                .hasMessageContaining("resource '" + r + "'").hasMessageContaining("statement timeout");
        assertThat(waited).isBetween(400L, 4_000L);
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void theCallersOwnLockWaitSettingIsBackAfterTheCheck(Database database) {
        JdbcFenceStore store = storeBuilder(database).lockTimeout(Duration.ofMillis(1500)).build();
        store.verify();
        JdbcTemplate jdbc = new JdbcTemplate(pool(database));
        DataSourceTransactionManager tm = new DataSourceTransactionManager(pool(database));
        JdbcFenceStore joined = JdbcFenceStore.builder(pool(database)).transactionManager(tm).table(store.table())
                .lockTimeout(Duration.ofMillis(1500)).build();
        String read = switch (database) {
            case POSTGRESQL -> "SHOW lock_timeout";
            case MARIADB -> "SELECT CAST(@@innodb_lock_wait_timeout AS CHAR)";
            case H2 -> "SELECT CAST(LOCK_TIMEOUT() AS VARCHAR)";
        };
        String set = switch (database) {
            case POSTGRESQL -> "SET LOCAL lock_timeout = '7s'";
            case MARIADB -> "SET SESSION innodb_lock_wait_timeout = 7";
            case H2 -> "SET LOCK_TIMEOUT 7000";
        };
        String r = "keep-" + System.nanoTime();
        List<String> seen = new ArrayList<>();
        new TransactionTemplate(tm).executeWithoutResult(status -> {
            jdbc.execute(set);
            seen.add(jdbc.queryForObject(read, String.class));
            try {
                joined.fence(r, new FencingToken(r, 1, "a"), () -> seen.add(jdbc.queryForObject(read, String.class)));
            } catch (Throwable e) {
                throw new AssertionError(e);
            }
            seen.add(jdbc.queryForObject(read, String.class));
            if (database == Database.MARIADB) {
                jdbc.execute("SET SESSION innodb_lock_wait_timeout = DEFAULT");
            } else if (database == Database.H2) {
                jdbc.execute("SET LOCK_TIMEOUT " + 1000);
            }
        });
        // the body and everything after the check see the caller's setting, not the store's bound
        assertThat(seen).hasSize(3).allMatch(v -> v.equals(seen.get(0)));
        assertThat(seen.get(0)).isIn("7s", "7", "7000");
    }
}
