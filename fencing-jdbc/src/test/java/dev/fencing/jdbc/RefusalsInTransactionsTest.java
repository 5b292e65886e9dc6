package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Refusals inside the caller's transaction on PostgreSQL, MariaDB and H2 (from a review): a nested fenced call's
 * rejection caught by the body leaves the transaction committable (it was marked rollback-only, against stores.md); a
 * first check racing another under H2's SERIALIZABLE is a retryable conflict (it was a store error); a caught busy
 * check does not let the transaction commit; tokens near Long.MAX_VALUE with a bound on one advance.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class RefusalsInTransactionsTest {

    private final Map<Database, HikariDataSource> pools = new EnumMap<>(Database.class);
    private final Map<Database, JdbcFenceStore> stores = new EnumMap<>(Database.class);
    private final Map<Database, JdbcFenceStore> bounded = new EnumMap<>(Database.class);
    private final String fenceTable = "refusals_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    private final String dataTable = "refusals_d_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);

    @BeforeAll
    void setUp() {
        for (Database db : Database.values()) {
            HikariDataSource pool = db.newPool(5);
            pools.put(db, pool);
            new JdbcTemplate(pool).execute(db.createDataTable(dataTable));
            DataSourceTransactionManager tm = new DataSourceTransactionManager(pool);
            JdbcFenceStore store = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable)
                    .createTableIfMissing(true).lockTimeout(Duration.ofSeconds(1)).build();
            store.verify();
            stores.put(db, store);
            JdbcFenceStore b = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable)
                    .maxAdvance(10).build();
            b.verify();
            bounded.put(db, b);
        }
    }

    @AfterAll
    void tearDown() {
        for (Database db : Database.values()) {
            JdbcTemplate jdbc = new JdbcTemplate(pools.get(db));
            jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
            jdbc.execute("DROP TABLE IF EXISTS " + dataTable);
            pools.get(db).close();
        }
    }

    private TransactionTemplate tx(Database db) {
        return new TransactionTemplate(new DataSourceTransactionManager(pools.get(db)));
    }

    private void fence(JdbcFenceStore s, String r, FencingToken t, Runnable body) {
        FencedCalls.fence(s, r, t, body);
    }

    private void insert(Database db, String r, FencingToken t) {
        new JdbcTemplate(pools.get(db)).update("INSERT INTO " + dataTable + " (k, token, v) VALUES (?, ?, ?)", r,
                t.value(), t.holder());
    }

    private List<Long> rows(Database db, String r) {
        return new JdbcTemplate(pools.get(db)).queryForList("SELECT token FROM " + dataTable
                + " WHERE k = ? ORDER BY id", Long.class, r);
    }

    /** stores.md: "In the default mode a body may catch a rejection of a nested fenced call and go on". */
    @ParameterizedTest
    @EnumSource(Database.class)
    @Timeout(60)
    void aCaughtNestedRejectionLetsTheOuterTransactionCommit(Database db) {
        String x = "x-" + UUID.randomUUID();
        String y = "y-" + UUID.randomUUID();
        FencingToken y50 = new FencingToken(y, 50, "y50");
        tx(db).executeWithoutResult(s -> fence(stores.get(db), y, y50, () -> { }));
        FencingToken x34 = new FencingToken(x, 34, "x34");
        Throwable thrown = catchThrowable(() -> tx(db).executeWithoutResult(s -> fence(stores.get(db), x, x34, () -> {
            insert(db, x, x34);
            try {
                fence(stores.get(db), y, new FencingToken(y, 40, "y40"), () -> { });
            } catch (TokenRejectedException expected) {
                // the nested call was refused; this one goes on
            }
        })));
        System.out.println("caught-nested-rejection " + db + ": thrown=" + thrown + " rows=" + rows(db, x));
        assertThat(thrown).isNull();
        assertThat(rows(db, x)).containsExactly(34L);
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    @Timeout(60)
    void tokensNearLongMaxValue(Database db) {
        String r = "max:" + UUID.randomUUID();
        long m = Long.MAX_VALUE;
        JdbcFenceStore b = bounded.get(db);
        tx(db).executeWithoutResult(s -> fence(b, r, new FencingToken(r, m - 5, "a"), () -> { }));
        tx(db).executeWithoutResult(s -> fence(b, r, new FencingToken(r, m, "b"), () -> { }));
        tx(db).executeWithoutResult(s -> fence(b, r, new FencingToken(r, m, "b"), () -> { }));
        Throwable stale = catchThrowable(() -> tx(db).executeWithoutResult(s -> fence(b, r,
                new FencingToken(r, m - 1, "c"), () -> { })));
        Throwable dup = catchThrowable(() -> tx(db).executeWithoutResult(s -> fence(b, r,
                new FencingToken(r, m, "d"), () -> { })));
        String r2 = "max2:" + UUID.randomUUID();
        tx(db).executeWithoutResult(s -> fence(b, r2, new FencingToken(r2, 1, "a"), () -> { }));
        Throwable far = catchThrowable(() -> tx(db).executeWithoutResult(s -> fence(b, r2,
                new FencingToken(r2, m, "z"), () -> { })));
        System.out.println("max " + db + ": stale=" + name(stale) + " dup=" + name(dup) + " far=" + name(far));
        assertThat(name(stale)).isEqualTo("StaleTokenException");
        assertThat(name(dup)).isEqualTo("DuplicateTokenException");
        assertThat(name(far)).isEqualTo("OutOfRangeTokenException");
    }

    private static String name(Throwable t) {
        return t == null ? "none" : t.getClass().getSimpleName();
    }

    /** A busy check whose refusal the caller catches: its own later write must not commit as if nothing happened. */
    @ParameterizedTest
    @EnumSource(Database.class)
    @Timeout(60)
    void aCaughtBusyCheckDoesNotLetTheTransactionCommit(Database db) throws Exception {
        String r = "busy-" + UUID.randomUUID();
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> tx(db).executeWithoutResult(s ->
                fence(stores.get(db), r, new FencingToken(r, 34, "h34"), () -> {
                    held.countDown();
                    try {
                        release.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                })), x -> new Thread(x).start());
        assertThat(held.await(20, TimeUnit.SECONDS)).isTrue();
        FencingToken t33 = new FencingToken(r, 33, "h33");
        String[] busy = new String[1];
        Throwable commit = catchThrowable(() -> tx(db).executeWithoutResult(s -> {
            try {
                fence(stores.get(db), r, t33, () -> insert(db, r, t33));
            } catch (RuntimeException e) {
                busy[0] = e.getClass().getSimpleName();
            }
            insert(db, r, new FencingToken(r, 33, "after-busy"));
        }));
        release.countDown();
        holder.get(30, TimeUnit.SECONDS);
        System.out.println("caught-busy " + db + ": busy=" + busy[0] + " commit=" + name(commit) + " rows="
                + rows(db, r));
        assertThat(busy[0]).isEqualTo("FenceBusyException");
        assertThat(rows(db, r)).doesNotContain(33L);
    }

    /** stores.md's isolation table: H2 SERIALIZABLE as REPEATABLE READ, a conflict (retryable). */
    @Test
    @Timeout(60)
    void h2SerializableFirstWriteRaceIsAConflict() throws Exception {
        Database db = Database.H2;
        String r = "h2s-" + UUID.randomUUID();
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Void> first = CompletableFuture.runAsync(() -> tx(db).executeWithoutResult(s ->
                fence(stores.get(db), r, new FencingToken(r, 34, "a"), () -> {
                    held.countDown();
                    try {
                        release.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                })), x -> new Thread(x).start());
        assertThat(held.await(20, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Throwable> second = CompletableFuture.supplyAsync(() -> {
            TransactionTemplate t = tx(db);
            t.setIsolationLevel(TransactionDefinition.ISOLATION_SERIALIZABLE);
            return catchThrowable(() -> t.executeWithoutResult(s ->
                    fence(stores.get(db), r, new FencingToken(r, 35, "b"), () -> { })));
        }, x -> new Thread(x).start());
        Thread.sleep(300);
        release.countDown();
        first.get(30, TimeUnit.SECONDS);
        Throwable t = second.get(30, TimeUnit.SECONDS);
        System.out.println("h2-serializable first write: " + t);
        assertThat(t).isInstanceOf(FenceConflictException.class);
    }
}
