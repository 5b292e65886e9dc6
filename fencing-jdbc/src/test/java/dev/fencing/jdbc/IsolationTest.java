package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.TransientFenceFailure;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Fenced writes under REPEATABLE READ and SERIALIZABLE: a serialization failure or deadlock is a retryable
 * {@code conflict} (a Spring {@link ConcurrencyFailureException}), never an {@code error}; and a transaction whose
 * snapshot predates a newer accepted token can never get an older one accepted.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class IsolationTest {

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

    private record Setup(JdbcFenceStore store, DataSourceTransactionManager tm, JdbcTemplate jdbc) {
        TransactionTemplate transaction(int isolation) {
            TransactionTemplate tt = new TransactionTemplate(tm);
            tt.setIsolationLevel(isolation);
            return tt;
        }

        JdbcFenceAdmin admin() {
            return new JdbcFenceAdmin(store);
        }
    }

    private Setup setup(Database database) {
        String table = Database.uniqueTable("fence");
        JdbcTemplate jdbc = new JdbcTemplate(pool(database));
        cleanup.add(() -> jdbc.execute("DROP TABLE IF EXISTS " + table));
        DataSourceTransactionManager tm = new DataSourceTransactionManager(pool(database));
        JdbcFenceStore store = JdbcFenceStore.builder(pool(database)).transactionManager(tm).table(table)
                .createTableIfMissing(true).build();
        store.verify();
        return new Setup(store, tm, jdbc);
    }

    /**
     * T1 takes its snapshot (max_seen 30), T2 has 34 accepted and commits, then T1 presents {@code presented}.
     * Returns what T1's check threw, or {@code null} when it was accepted.
     */
    private Throwable presentAfterANewerCommit(Setup s, String r, int isolation, long presented, Guarded guarded) {
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        s.transaction(isolation).executeWithoutResult(status -> {
            assertThat(s.admin().maxSeen(r)).hasValue(30);                     // the snapshot
            CompletableFuture.runAsync(() -> {
                try {
                    s.store.fence(r, new FencingToken(r, 34, "t2"), () -> null); // commits on its own
                } catch (Throwable e) {
                    throw new AssertionError(e);
                }
            }).join();
            outcome.set(catchThrowable(() -> guarded.call(new FencingToken(r, presented, "t1"), () -> null)));
            status.setRollbackOnly();
        });
        return outcome.get();
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void anOldSnapshotPresentingAnOlderTokenIsNeverAccepted(Database database) throws Throwable {
        Setup s = setup(database);
        // on MariaDB, SERIALIZABLE reads take shared locks: T2 would wait for T1 (see the deadlock test below)
        int[] levels = database == Database.MARIADB ? new int[] {TransactionDefinition.ISOLATION_REPEATABLE_READ}
                : new int[] {TransactionDefinition.ISOLATION_REPEATABLE_READ,
                        TransactionDefinition.ISOLATION_SERIALIZABLE};
        for (int isolation : levels) {
            String r = "snapshot-" + System.nanoTime();
            s.store.fence(r, new FencingToken(r, 30, "t0"), () -> null);
            Guarded guarded = new Guarded(s.store, r);
            Throwable t1 = presentAfterANewerCommit(s, r, isolation, 33, guarded);
            assertThat(t1).as("33 after 34 under isolation " + isolation).isNotNull()
                    .isInstanceOfAny(StaleTokenException.class, FenceConflictException.class);
            assertThat(guarded.checks("accepted") + guarded.checks("error")).isZero();
            assertThat(s.admin().maxSeen(r)).hasValue(34);
        }
    }

    @ParameterizedTest
    @EnumSource(value = Database.class, names = {"POSTGRESQL", "H2"})
    void aNewerTokenFromAnOldSnapshotIsAConflictNotAnError(Database database) {
        Setup s = setup(database);
        for (int isolation : new int[] {TransactionDefinition.ISOLATION_REPEATABLE_READ,
                TransactionDefinition.ISOLATION_SERIALIZABLE}) {
            String r = "snapshot-" + System.nanoTime();
            try {
                s.store.fence(r, new FencingToken(r, 30, "t0"), () -> null);
            } catch (Throwable e) {
                throw new AssertionError(e);
            }
            Guarded guarded = new Guarded(s.store, r);
            // the row changed after T1's snapshot: PostgreSQL and H2 refuse to update it from that snapshot
            Throwable t1 = presentAfterANewerCommit(s, r, isolation, 35, guarded);
            assertThat(t1).as("isolation " + isolation).isInstanceOf(ConcurrencyFailureException.class)
                    .isInstanceOf(TransientFenceFailure.class).hasMessageContaining(r);
            assertThat(((TransientFenceFailure) t1).reason()).isEqualTo(TransientFenceFailure.Reason.CONFLICT);
            assertThat(guarded.checks("conflict")).isEqualTo(1);
            assertThat(guarded.checks("error")).isZero();
            assertThat(s.admin().maxSeen(r)).hasValue(34);
        }
    }

    @Test
    void onMariaDbRepeatableReadTheCheckReadsTheLatestRowAndANewerTokenIsAccepted() throws Throwable {
        Setup s = setup(Database.MARIADB);
        String r = "snapshot-" + System.nanoTime();
        s.store.fence(r, new FencingToken(r, 30, "t0"), () -> null);
        Guarded guarded = new Guarded(s.store, r);
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        s.transaction(TransactionDefinition.ISOLATION_REPEATABLE_READ).executeWithoutResult(status -> {
            assertThat(s.admin().maxSeen(r)).hasValue(30);
            CompletableFuture.runAsync(() -> {
                try {
                    s.store.fence(r, new FencingToken(r, 34, "t2"), () -> null);
                } catch (Throwable e) {
                    throw new AssertionError(e);
                }
            }).join();
            outcome.set(catchThrowable(() -> guarded.call(new FencingToken(r, 35, "t1"), () -> null)));
        });
        assertThat(outcome.get()).isNull();
        assertThat(guarded.checks("accepted")).isEqualTo(1);
        assertThat(s.admin().maxSeen(r)).hasValue(35);
    }

    @Test
    void onMariaDbSerializableAReaderThatThenChecksDeadlocksAndOneSideIsAConflict() throws Throwable {
        Setup s = setup(Database.MARIADB);
        String r = "serializable-" + System.nanoTime();
        s.store.fence(r, new FencingToken(r, 30, "t0"), () -> null);
        Guarded reader = new Guarded(s.store, r);
        Guarded newer = new Guarded(s.store, r);
        CountDownLatch read = new CountDownLatch(1);
        AtomicReference<Throwable> t1 = new AtomicReference<>();
        AtomicReference<Throwable> t2 = new AtomicReference<>();
        CompletableFuture<Void> readerTx = CompletableFuture.runAsync(() ->
                s.transaction(TransactionDefinition.ISOLATION_SERIALIZABLE).executeWithoutResult(status -> {
                    assertThat(s.admin().maxSeen(r)).hasValue(30);   // SERIALIZABLE: a shared lock on the row
                    read.countDown();
                    sleep(500);                                      // T2 queues for the row behind it
                    t1.set(catchThrowable(() -> reader.call(new FencingToken(r, 33, "t1"), () -> null)));
                    if (t1.get() != null) {
                        status.setRollbackOnly();
                    }
                }));
        assertThat(read.await(10, TimeUnit.SECONDS)).isTrue();
        t2.set(catchThrowable(() -> newer.call(new FencingToken(r, 34, "t2"), () -> null)));
        readerTx.get(30, TimeUnit.SECONDS);

        List<Throwable> failures = new ArrayList<>();
        if (t1.get() != null) {
            failures.add(t1.get());
        }
        if (t2.get() != null) {
            failures.add(t2.get());
        }
        assertThat(failures).hasSize(1);
        assertThat(failures.get(0)).isInstanceOf(FenceConflictException.class);
        assertThat(reader.checks("conflict") + newer.checks("conflict")).isEqualTo(1);
        assertThat(reader.checks("error") + newer.checks("error")).isZero();
        assertThat(s.admin().maxSeen(r)).hasValue(t2.get() == null ? 34 : 33);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
