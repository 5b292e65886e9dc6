package dev.fencing.jdbc;

import dev.fencing.rule.StaleTokenException;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Check-at-commit and more shapes of fenced calls from transaction callbacks, from the re-trial: a first fenced call
 * in beforeCompletion (its stale write committed, the caller told it rolled back) or in afterCommit (refused where
 * nobody heard) is checked at once; calls after the body's in beforeCompletion and afterCompletion, a rejected then an
 * accepted call in afterCommit, two stores, REQUIRES_NEW inside beforeCommit.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class CheckAtCommitCallbackShapesTest {
    private HikariDataSource pool;
    private JdbcTemplate jdbc;
    private DataSourceTransactionManager tm;
    private final String fenceTable = "shapes_fence_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    private final String fenceTable2 = "shapes_fence2_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    private final String dataTable = "shapes_data_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    private JdbcFenceStore store;
    private JdbcFenceStore store2;

    @BeforeAll
    void setUp() {
        pool = Database.POSTGRESQL.newPool(4);
        jdbc = new JdbcTemplate(pool);
        tm = new DataSourceTransactionManager(pool);
        jdbc.execute(Database.POSTGRESQL.createDataTable(dataTable));
        store = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable).createTableIfMissing(true)
                .checkAtCommit(true).build();
        store.verify();
        store2 = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable2).createTableIfMissing(true)
                .checkAtCommit(true).build();
        store2.verify();
    }

    @AfterAll
    void tearDown() {
        jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
        jdbc.execute("DROP TABLE IF EXISTS " + fenceTable2);
        jdbc.execute("DROP TABLE IF EXISTS " + dataTable);
        pool.close();
    }

    private void insert(String r, FencingToken token, String v) {
        jdbc.update("INSERT INTO " + dataTable + " (k, token, v) VALUES (?, ?, ?)", r, token.value(), v);
    }

    private List<Long> tokens(String r) {
        return jdbc.queryForList("SELECT token FROM " + dataTable + " WHERE k = ? ORDER BY id", Long.class, r);
    }

    private void fencedInsert(JdbcFenceStore s, String r, FencingToken token) {
        new TransactionTemplate(tm).executeWithoutResult(st -> FencedCalls.fence(s, r, token,
                () -> insert(r, token, "v")));
    }

    /** The transaction's first fenced call made in another synchronization's beforeCompletion. */
    @Test
    void staleFirstFencedCallInBeforeCompletion() {
        String r = "bc-" + UUID.randomUUID();
        fencedInsert(store, r, new FencingToken(r, 34, "new"));
        FencingToken zombie = new FencingToken(r, 33, "zombie");
        Throwable[] inCallback = new Throwable[1];
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(tm).executeWithoutResult(s ->
                TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                    @Override
                    public void beforeCompletion() {
                        try {
                            FencedCalls.fence(store, r, zombie, () -> insert(r, zombie, "zombie"));
                        } catch (Throwable e) {
                            inCallback[0] = e;
                        }
                    }
                })));
        System.out.println("beforeCompletion first call: thrown=" + thrown + " inCallback=" + inCallback[0]
                + " tokens=" + tokens(r));
        assertThat(tokens(r)).as("rows written for %s (max_seen 34)", r).containsExactly(34L);
        assertThat(inCallback[0]).as("checked at once, in the callback").isInstanceOf(StaleTokenException.class);
    }

    /** Same after a fenced call in the body (checks already sent): checked at once. */
    @Test
    void staleFencedCallInBeforeCompletionAfterBodyCall() {
        String r = "bc2-" + UUID.randomUUID();
        String other = "bc2-other-" + UUID.randomUUID();
        fencedInsert(store, r, new FencingToken(r, 34, "new"));
        FencingToken zombie = new FencingToken(r, 33, "zombie");
        Throwable[] inCallback = new Throwable[1];
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(tm).executeWithoutResult(s -> {
            FencingToken first = new FencingToken(other, 1, "h1");
            FencedCalls.fence(store, other, first, () -> insert(other, first, "body"));
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void beforeCompletion() {
                    try {
                        FencedCalls.fence(store, r, zombie, () -> insert(r, zombie, "zombie"));
                    } catch (Throwable e) {
                        inCallback[0] = e;
                    }
                }
            });
        }));
        System.out.println("beforeCompletion after body call: thrown=" + thrown + " inCallback=" + inCallback[0]
                + " tokens=" + tokens(r));
        assertThat(tokens(r)).containsExactly(34L);
    }

    /** A real AFTER_COMMIT @TransactionalEventListener runs in afterCompletion (synchronizations cleared). */
    @Test
    void staleFencedCallInAfterCompletionFirstAndAfterBodyCall() {
        String r = "ac-" + UUID.randomUUID();
        String other = "ac-other-" + UUID.randomUUID();
        fencedInsert(store, r, new FencingToken(r, 34, "new"));
        FencingToken zombie = new FencingToken(r, 33, "zombie");
        for (boolean bodyCall : new boolean[] {false, true}) {
            Throwable[] inCallback = new Throwable[1];
            Throwable thrown = catchThrowable(() -> new TransactionTemplate(tm).executeWithoutResult(s -> {
                if (bodyCall) {
                    FencingToken first = new FencingToken(other, 1, "h1");
                    FencedCalls.fence(store, other, first, () -> insert(other, first, "body"));
                }
                TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                    @Override
                    public void afterCompletion(int status) {
                        try {
                            FencedCalls.fence(store, r, zombie, () -> insert(r, zombie, "zombie"));
                        } catch (Throwable e) {
                            inCallback[0] = e;
                        }
                    }
                });
            }));
            System.out.println("afterCompletion bodyCall=" + bodyCall + ": thrown=" + thrown + " inCallback="
                    + inCallback[0] + " tokens=" + tokens(r));
            assertThat(tokens(r)).containsExactly(34L);
            assertThat(inCallback[0]).isNotNull();
        }
    }

    /** First fenced call of the transaction in afterCommit, stale: is the caller told? is the write rolled back? */
    @Test
    void staleFirstFencedCallInAfterCommit() {
        String r = "acm-" + UUID.randomUUID();
        fencedInsert(store, r, new FencingToken(r, 34, "new"));
        FencingToken zombie = new FencingToken(r, 33, "zombie");
        Throwable[] inCallback = new Throwable[1];
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(tm).executeWithoutResult(s ->
                TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                    @Override
                    public void afterCommit() {
                        try {
                            FencedCalls.fence(store, r, zombie, () -> insert(r, zombie, "zombie"));
                        } catch (Throwable e) {
                            inCallback[0] = e;
                        }
                    }
                })));
        System.out.println("afterCommit first call: thrown=" + thrown + " inCallback=" + inCallback[0]
                + " tokens=" + tokens(r));
        assertThat(tokens(r)).containsExactly(34L);
        assertThat(inCallback[0]).as("checked at once, in the callback").isInstanceOf(StaleTokenException.class);
    }

    /** afterCommit: after the body's call, a rejected call on r, then an accepted one on r2 (caught rejection). */
    @Test
    void rejectedThenAcceptedInAfterCommit() {
        String r = "ra-" + UUID.randomUUID();
        String r2 = "ra2-" + UUID.randomUUID();
        String other = "ra-other-" + UUID.randomUUID();
        fencedInsert(store, r, new FencingToken(r, 34, "new"));
        FencingToken zombie = new FencingToken(r, 33, "zombie");
        FencingToken good = new FencingToken(r2, 5, "good");
        Throwable[] inCallback = new Throwable[2];
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(tm).executeWithoutResult(s -> {
            FencingToken first = new FencingToken(other, 1, "h1");
            FencedCalls.fence(store, other, first, () -> insert(other, first, "body"));
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCommit() {
                    try {
                        FencedCalls.fence(store, r, zombie, () -> insert(r, zombie, "zombie"));
                    } catch (Throwable e) {
                        inCallback[0] = e;
                    }
                    try {
                        FencedCalls.fence(store, r2, good, () -> insert(r2, good, "good"));
                    } catch (Throwable e) {
                        inCallback[1] = e;
                    }
                }
            });
        }));
        System.out.println("afterCommit rejected-then-accepted: thrown=" + thrown + " in=" + inCallback[0] + " / "
                + inCallback[1] + " tokens(r)=" + tokens(r) + " tokens(r2)=" + tokens(r2));
        assertThat(tokens(r)).containsExactly(34L);
        assertThat(inCallback[1]).isNull();
        assertThat(tokens(r2)).containsExactly(5L);
    }

    /** Two check-at-commit stores; the second's first call made in a later beforeCommit ordered before the first. */
    @Test
    void twoStoresSecondFirstCallInEarlierOrderedBeforeCommit() {
        String r = "2s-" + UUID.randomUUID();
        String a = "2s-a-" + UUID.randomUUID();
        fencedInsert(store2, r, new FencingToken(r, 34, "new"));
        FencingToken zombie = new FencingToken(r, 33, "zombie");
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(tm).executeWithoutResult(s -> {
            FencingToken first = new FencingToken(a, 1, "h1");
            FencedCalls.fence(store, a, first, () -> insert(a, first, "body"));
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public int getOrder() {
                    return 0;
                }

                @Override
                public void beforeCommit(boolean readOnly) {
                    FencedCalls.fence(store2, r, zombie, () -> insert(r, zombie, "zombie"));
                }
            });
        }));
        System.out.println("two stores: thrown=" + thrown + " tokens(r)=" + tokens(r) + " tokens(a)=" + tokens(a));
        assertThat(tokens(r)).containsExactly(34L);
        assertThat(thrown).isNotNull();
    }

    /** REQUIRES_NEW fenced call inside a beforeCommit callback, stale. */
    @Test
    void requiresNewInsideBeforeCommit() {
        String r = "rn-" + UUID.randomUUID();
        String a = "rn-a-" + UUID.randomUUID();
        fencedInsert(store, r, new FencingToken(r, 34, "new"));
        FencingToken zombie = new FencingToken(r, 33, "zombie");
        Throwable[] inCallback = new Throwable[1];
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(tm).executeWithoutResult(s -> {
            FencingToken first = new FencingToken(a, 1, "h1");
            FencedCalls.fence(store, a, first, () -> insert(a, first, "body"));
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void beforeCommit(boolean readOnly) {
                    TransactionTemplate rn = new TransactionTemplate(tm);
                    rn.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
                    try {
                        rn.executeWithoutResult(x -> FencedCalls.fence(store, r, zombie,
                                () -> insert(r, zombie, "zombie")));
                    } catch (Throwable e) {
                        inCallback[0] = e;
                    }
                }
            });
        }));
        System.out.println("requires_new in beforeCommit: thrown=" + thrown + " in=" + inCallback[0]
                + " tokens(r)=" + tokens(r) + " tokens(a)=" + tokens(a));
        assertThat(tokens(r)).containsExactly(34L);
        assertThat(tokens(a)).containsExactly(1L);
    }
}
