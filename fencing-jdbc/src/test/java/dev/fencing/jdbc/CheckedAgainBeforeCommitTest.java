package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * MariaDB and H2 run a transaction's checks again before its commit ({@code HeldChecks}); that must never refuse a
 * legitimate transaction (a re-trial found the first version, a read-back, refusing every commit after a rolled-back
 * savepoint that held a check): savepoints rolled back with a first check or a newer token inside, two stores in one
 * transaction, two tokens and two resources, a family's first row.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class CheckedAgainBeforeCommitTest {
    private final String sfx = UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    private final String fence = "again_fence_" + sfx;
    private final String fence2 = "again_fence2_" + sfx;
    private final String data = "again_data_" + sfx;
    private final Map<Database, HikariDataSource> pools = new EnumMap<>(Database.class);
    private final Map<Database, DataSourceTransactionManager> tms = new EnumMap<>(Database.class);
    private final Map<Database, JdbcFenceStore> stores = new EnumMap<>(Database.class);
    private final Map<Database, JdbcFenceStore> stores2 = new EnumMap<>(Database.class);

    @BeforeAll
    void setUp() {
        for (Database db : List.of(Database.MARIADB, Database.H2)) {
            HikariDataSource p = db.newPool(4);
            pools.put(db, p);
            JdbcTemplate j = new JdbcTemplate(p);
            j.execute("DROP TABLE IF EXISTS " + data);
            j.execute(db.createDataTable(data));
            DataSourceTransactionManager tm = new DataSourceTransactionManager(p);
            tms.put(db, tm);
            JdbcFenceStore s = JdbcFenceStore.builder(p).transactionManager(tm).table(fence)
                    .createTableIfMissing(true).build();
            s.verify();
            stores.put(db, s);
            JdbcFenceStore s2 = JdbcFenceStore.builder(p).transactionManager(tm).table(fence2)
                    .createTableIfMissing(true).build();
            s2.verify();
            stores2.put(db, s2);
        }
    }

    @AfterAll
    void tearDown() {
        pools.forEach((db, p) -> {
            JdbcTemplate j = new JdbcTemplate(p);
            for (String t : List.of(fence, fence2, data)) {
                j.execute("DROP TABLE IF EXISTS " + t);
            }
            p.close();
        });
    }

    private JdbcTemplate jdbc(Database db) {
        return new JdbcTemplate(pools.get(db));
    }

    private void insert(Database db, String r, FencingToken t) {
        jdbc(db).update("INSERT INTO " + data + " (k, token, v) VALUES (?, ?, ?)", r, t.value(), t.holder());
    }

    private List<Long> tokens(Database db, String r) {
        return jdbc(db).queryForList("SELECT token FROM " + data + " WHERE k = ? ORDER BY id", Long.class, r);
    }

    private Long maxSeen(Database db, String table, String r) {
        List<Long> l = jdbc(db).queryForList("SELECT max_seen FROM " + table + " WHERE resource = ?", Long.class, r);
        return l.isEmpty() ? null : l.get(0);
    }

    private TransactionTemplate tx(Database db) {
        return new TransactionTemplate(tms.get(db));
    }

    private TransactionTemplate nested(Database db) {
        TransactionTemplate t = new TransactionTemplate(tms.get(db));
        t.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
        return t;
    }

    /** A savepoint (NESTED) holding a transaction's first check of r, rolled back; the outer commits its own work. */
    @ParameterizedTest
    @EnumSource(value = Database.class, names = {"MARIADB", "H2"})
    void savepointRolledBackWithACheckInsideThenOuterCommits(Database db) {
        String r = "sp-" + UUID.randomUUID();
        String plain = "sp-plain-" + UUID.randomUUID();
        FencingToken t = new FencingToken(r, 7, "h7");
        Throwable thrown = catchThrowable(() -> tx(db).executeWithoutResult(s -> {
            insert(db, plain, new FencingToken(plain, 1, "outer"));
            try {
                nested(db).executeWithoutResult(n -> FencedCalls.fence(stores.get(db), r, t, () -> {
                    insert(db, r, t);
                    throw new IllegalStateException("body fails, savepoint rolled back");
                }));
            } catch (IllegalStateException expected) {
                // the outer goes on, as NESTED is for
            }
        }));
        System.out.println("" + db + " savepoint first check: thrown=" + thrown + " plain=" + tokens(db, plain)
                + " r=" + tokens(db, r) + " max_seen=" + maxSeen(db, fence, r));
        assertThat(thrown).as("outer commit").isNull();
        assertThat(tokens(db, plain)).containsExactly(1L);
    }

    /** Outer fenced with 33; a NESTED savepoint fences r with 34 and rolls back; the outer's 33 still holds. */
    @ParameterizedTest
    @EnumSource(value = Database.class, names = {"MARIADB", "H2"})
    void savepointRolledBackWithANewerTokenInsideAFencedBody(Database db) {
        String r = "sp2-" + UUID.randomUUID();
        FencingToken t33 = new FencingToken(r, 33, "h33");
        FencingToken t34 = new FencingToken(r, 34, "h34");
        Throwable thrown = catchThrowable(() -> tx(db).executeWithoutResult(s ->
                FencedCalls.fence(stores.get(db), r, t33, () -> {
                    insert(db, r, t33);
                    try {
                        nested(db).executeWithoutResult(n -> FencedCalls.fence(stores.get(db), r, t34, () -> {
                            insert(db, r, t34);
                            throw new IllegalStateException("inner fails");
                        }));
                    } catch (IllegalStateException expected) {
                        // rolled back to the savepoint: row back at 33, held by this transaction
                    }
                })));
        System.out.println("" + db + " savepoint newer token: thrown=" + thrown + " r=" + tokens(db, r)
                + " max_seen=" + maxSeen(db, fence, r));
        assertThat(thrown).as("outer commit").isNull();
        assertThat(tokens(db, r)).containsExactly(33L);
    }

    @ParameterizedTest
    @EnumSource(value = Database.class, names = {"MARIADB", "H2"})
    void twoStoresTwoTablesOneTransaction(Database db) {
        String r = "2t-" + UUID.randomUUID();
        FencingToken a = new FencingToken(r, 3, "a");
        FencingToken b = new FencingToken(r, 9, "b");
        Throwable thrown = catchThrowable(() -> tx(db).executeWithoutResult(s -> {
            FencedCalls.fence(stores.get(db), r, a, () -> insert(db, r, a));
            FencedCalls.fence(stores2.get(db), r, b, () -> insert(db, r, b));
        }));
        System.out.println("" + db + " two stores: thrown=" + thrown + " r=" + tokens(db, r));
        assertThat(thrown).isNull();
        assertThat(tokens(db, r)).containsExactly(3L, 9L);
    }

    @ParameterizedTest
    @EnumSource(value = Database.class, names = {"MARIADB", "H2"})
    void oneResourceTwoTokensSameHolderRecheckAndTwoResources(Database db) {
        String r = "tt-" + UUID.randomUUID();
        String r2 = "tt2-" + UUID.randomUUID();
        FencingToken t33 = new FencingToken(r, 33, "h33");
        FencingToken t34 = new FencingToken(r, 34, "h34");
        FencingToken o = new FencingToken(r2, 2, "o");
        Throwable thrown = catchThrowable(() -> tx(db).executeWithoutResult(s -> {
            FencedCalls.fence(stores.get(db), r, t33, () -> insert(db, r, t33));
            FencedCalls.fence(stores.get(db), r2, o, () -> insert(db, r2, o));
            FencedCalls.fence(stores.get(db), r, t34, () -> insert(db, r, t34));
            FencedCalls.fence(stores.get(db), r, t34, () -> insert(db, r, t34)); // same holder again
            try { // a stale one, caught
                FencedCalls.fence(stores.get(db), r, t33, () -> insert(db, r, t33));
            } catch (TokenRejectedException expected) {
            }
        }));
        System.out.println("" + db + " two tokens: thrown=" + thrown + " r=" + tokens(db, r) + " r2=" + tokens(db, r2));
        assertThat(thrown).isNull();
        assertThat(tokens(db, r)).containsExactly(33L, 34L, 34L);
    }

    /** A family resource's first row, a family floor raised first; a same-holder re-check in a later transaction. */
    @ParameterizedTest
    @EnumSource(value = Database.class, names = {"MARIADB", "H2"})
    void familyFirstRowAndLaterSameHolderRecheck(Database db) {
        String fam = "againfam" + UUID.randomUUID().toString().substring(0, 6);
        String r = fam + ":x";
        FencingToken t = new FencingToken(r, 40, "h40");
        Throwable thrown = catchThrowable(() -> tx(db).executeWithoutResult(s ->
                FencedCalls.fence(stores.get(db), r, t, () -> insert(db, r, t))));
        Throwable thrown2 = catchThrowable(() -> tx(db).executeWithoutResult(s ->
                FencedCalls.fence(stores.get(db), r, t, () -> insert(db, r, t))));
        String r2 = fam + ":y";
        FencingToken t2 = new FencingToken(r2, 41, "h41");
        Throwable thrown3 = catchThrowable(() -> tx(db).executeWithoutResult(s -> {
            FencedCalls.fence(stores.get(db), r2, t2, () -> insert(db, r2, t2));
            FencedCalls.fence(stores.get(db), r, new FencingToken(r, 42, "h42"), () -> { });
        }));
        System.out.println("" + db + " family: " + thrown + " / " + thrown2 + " / " + thrown3 + " r=" + tokens(db, r)
                + " r2=" + tokens(db, r2));
        assertThat(thrown).isNull();
        assertThat(thrown2).isNull();
        assertThat(thrown3).isNull();
    }

    /** Without synchronization the checks could not run again before the commit: refused, nothing written. */
    @ParameterizedTest
    @EnumSource(value = Database.class, names = {"MARIADB", "H2"})
    void aTransactionWithoutSynchronizationIsRefused(Database db) {
        DataSourceTransactionManager never = new DataSourceTransactionManager(pools.get(db));
        never.setTransactionSynchronization(DataSourceTransactionManager.SYNCHRONIZATION_NEVER);
        JdbcFenceStore store = JdbcFenceStore.builder(pools.get(db)).transactionManager(never).table(fence).build();
        String r = "never-" + UUID.randomUUID();
        FencingToken t = new FencingToken(r, 3, "h3");
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(never).executeWithoutResult(s ->
                FencedCalls.fence(store, r, t, () -> insert(db, r, t))));
        assertThat(thrown).isInstanceOf(dev.fencing.store.FenceStoreException.class)
                .hasMessageContaining("SYNCHRONIZATION_NEVER");
        assertThat(tokens(db, r)).isEmpty();
    }

    /**
     * Two store instances on one table see one row per resource: a transaction that checks 5 through one and 6 through
     * the other commits, as with one store (a review of the R2DBC store found the first store's 5 run again and
     * refused, here too).
     */
    @ParameterizedTest
    @EnumSource(value = Database.class, names = {"MARIADB", "H2"})
    void twoStoresOnTheSameTableShareTheTransactionsChecks(Database db) {
        JdbcFenceStore other = JdbcFenceStore.builder(pools.get(db)).transactionManager(tms.get(db)).table(fence)
                .build();
        String r = "same-table-" + UUID.randomUUID();
        FencingToken t5 = new FencingToken(r, 5, "a");
        FencingToken t6 = new FencingToken(r, 6, "b");
        Throwable thrown = catchThrowable(() -> tx(db).executeWithoutResult(s -> {
            FencedCalls.fence(stores.get(db), r, t5, () -> insert(db, r, t5));
            FencedCalls.fence(other, r, t6, () -> insert(db, r, t6));
        }));
        assertThat(thrown).isNull();
        assertThat(tokens(db, r)).containsExactly(5L, 6L);
        assertThat(maxSeen(db, fence, r)).isEqualTo(6L);
    }
}
