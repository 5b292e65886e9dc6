package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.rule.StaleTokenException;
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
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Check-at-commit and fenced calls made from the transaction's own callbacks (an outbox, a {@code BEFORE_COMMIT} or
 * {@code AFTER_COMMIT} event listener): a review and its re-trial found stale writes committed from each callback, as
 * the transaction's first fenced call or after the body's (queued checks never sent, or sent after the commit; a
 * write in afterCommit committed with the connection's autocommit). Each is checked at once, before its body.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class CheckAtCommitCallbacksTest {

    /** The callback a fenced call is made from. */
    enum Phase { BEFORE_COMMIT, BEFORE_COMPLETION, AFTER_COMMIT, AFTER_COMPLETION }

    private HikariDataSource pool;
    private JdbcTemplate jdbc;
    private DataSourceTransactionManager tm;
    private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    private final String fenceTable = "cbk_fence_" + suffix;
    private final String fenceTable2 = "cbk_fence2_" + suffix;
    private final String dataTable = "cbk_data_" + suffix;
    private JdbcFenceStore store;
    private JdbcFenceStore store2;

    @BeforeAll
    void setUp() {
        pool = Database.POSTGRESQL.newPool(4);
        jdbc = new JdbcTemplate(pool);
        tm = new DataSourceTransactionManager(pool);
        jdbc.execute(Database.POSTGRESQL.createDataTable(dataTable));
        store = atCommit(fenceTable);
        store2 = atCommit(fenceTable2);
    }

    private JdbcFenceStore atCommit(String table) {
        JdbcFenceStore s = JdbcFenceStore.builder(pool).transactionManager(tm).table(table).createTableIfMissing(true)
                .checkAtCommit(true).build();
        s.verify();
        return s;
    }

    @AfterAll
    void tearDown() {
        for (String table : List.of(fenceTable, fenceTable2, dataTable)) {
            jdbc.execute("DROP TABLE IF EXISTS " + table);
        }
        pool.close();
    }

    private void insert(String r, FencingToken token, String v) {
        jdbc.update("INSERT INTO " + dataTable + " (k, token, v) VALUES (?, ?, ?)", r, token.value(), v);
    }

    private List<Long> tokens(String r) {
        return jdbc.queryForList("SELECT token FROM " + dataTable + " WHERE k = ? ORDER BY id", Long.class, r);
    }

    private Long maxSeen(String r) {
        return jdbc.queryForObject("SELECT max_seen FROM " + fenceTable + " WHERE resource = ?", Long.class, r);
    }

    /** A fenced insert of {@code token} in a transaction of its own. */
    private void fencedInsert(JdbcFenceStore s, String r, FencingToken token) {
        new TransactionTemplate(tm).executeWithoutResult(st -> FencedCalls.fence(s, r, token,
                () -> insert(r, token, "v")));
    }

    /** A synchronization running {@code call} in {@code phase}; what the call throws is kept in {@code thrown[0]}. */
    private static TransactionSynchronization calling(Phase phase, Runnable call, Throwable[] thrown) {
        Runnable kept = () -> {
            try {
                call.run();
            } catch (RuntimeException | Error e) {
                thrown[0] = e;
            }
        };
        return new TransactionSynchronization() {
            @Override
            public void beforeCommit(boolean readOnly) {
                if (phase == Phase.BEFORE_COMMIT) {
                    kept.run();
                }
            }

            @Override
            public void beforeCompletion() {
                if (phase == Phase.BEFORE_COMPLETION) {
                    kept.run();
                }
            }

            @Override
            public void afterCommit() {
                if (phase == Phase.AFTER_COMMIT) {
                    kept.run();
                }
            }

            @Override
            public void afterCompletion(int status) {
                if (phase == Phase.AFTER_COMPLETION) {
                    kept.run();
                }
            }
        };
    }

    /**
     * A zombie's call with 33 after 34 committed, from each callback, as the transaction's first fenced call and
     * after a fenced call in its body: refused in the callback, nothing of it written.
     */
    @ParameterizedTest
    @EnumSource(Phase.class)
    void aStaleCallFromACallbackIsRefusedThereAndWritesNothing(Phase phase) {
        for (boolean afterBodyCall : new boolean[] {false, true}) {
            String r = "cbk-" + UUID.randomUUID();
            String other = "cbk-other-" + UUID.randomUUID();
            fencedInsert(store, r, new FencingToken(r, 34, "new"));
            FencingToken zombie = new FencingToken(r, 33, "zombie");
            Throwable[] inCallback = new Throwable[1];
            Throwable thrown = catchThrowable(() -> new TransactionTemplate(tm).executeWithoutResult(s -> {
                if (afterBodyCall) {
                    FencingToken first = new FencingToken(other, 1, "h1");
                    FencedCalls.fence(store, other, first, () -> insert(other, first, "body"));
                }
                TransactionSynchronizationManager.registerSynchronization(calling(phase,
                        () -> FencedCalls.fence(store, r, zombie, () -> insert(r, zombie, "zombie")), inCallback));
            }));
            assertThat(tokens(r)).as("%s, after a body call %s: rows written", phase, afterBodyCall)
                    .containsExactly(34L);
            assertThat(inCallback[0]).as("%s, after a body call %s: refused in the callback (the commit: %s)", phase,
                    afterBodyCall, thrown).isInstanceOf(StaleTokenException.class);
        }
    }

    /** The same callbacks with newer tokens: each call's write and check commit, and max_seen advances. */
    @Test
    void newerTokensFromCallbacksWriteAndAdvance() {
        String r = "cbk-" + UUID.randomUUID();
        fencedInsert(store, r, new FencingToken(r, 34, "new"));
        long value = 35;
        for (Phase phase : Phase.values()) {
            FencingToken token = new FencingToken(r, value++, "h" + phase);
            Throwable[] inCallback = new Throwable[1];
            new TransactionTemplate(tm).executeWithoutResult(s -> TransactionSynchronizationManager
                    .registerSynchronization(calling(phase, () -> FencedCalls.fence(store, r, token,
                            () -> insert(r, token, phase.name())), inCallback)));
            assertThat(inCallback[0]).as(phase.name()).isNull();
        }
        assertThat(tokens(r)).containsExactly(34L, 35L, 36L, 37L, 38L);
        assertThat(maxSeen(r)).isEqualTo(38L);
    }

    /** A synchronization ordered after this mode's, registered after the body's call (an outbox): checked at once. */
    @Test
    void aStaleCallInALaterSynchronizationsBeforeCommitFailsTheCommit() {
        String r = "cbk-" + UUID.randomUUID();
        String other = "cbk-other-" + UUID.randomUUID();
        fencedInsert(store, r, new FencingToken(r, 34, "new"));
        FencingToken zombie = new FencingToken(r, 33, "zombie");
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(tm).executeWithoutResult(s -> {
            FencingToken first = new FencingToken(other, 1, "h1");
            FencedCalls.fence(store, other, first, () -> insert(other, first, "body"));
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void beforeCommit(boolean readOnly) {
                    FencedCalls.fence(store, r, zombie, () -> insert(r, zombie, "zombie"));
                }
            });
        }));
        assertThat(thrown).isInstanceOf(StaleTokenException.class);
        assertThat(tokens(r)).containsExactly(34L);
        assertThat(tokens(other)).as("the transaction rolled back").isEmpty();
        assertThat(maxSeen(r)).isEqualTo(34L);
    }

    /** afterCommit: a refused call, then an accepted one on another resource, both after the body's call. */
    @Test
    void aRefusedThenAnAcceptedCallInAfterCommit() {
        String r = "cbk-" + UUID.randomUUID();
        String r2 = "cbk-" + UUID.randomUUID();
        String other = "cbk-other-" + UUID.randomUUID();
        fencedInsert(store, r, new FencingToken(r, 34, "new"));
        FencingToken zombie = new FencingToken(r, 33, "zombie");
        FencingToken good = new FencingToken(r2, 5, "good");
        Throwable[] refused = new Throwable[1];
        Throwable[] accepted = new Throwable[1];
        new TransactionTemplate(tm).executeWithoutResult(s -> {
            FencingToken first = new FencingToken(other, 1, "h1");
            FencedCalls.fence(store, other, first, () -> insert(other, first, "body"));
            TransactionSynchronizationManager.registerSynchronization(calling(Phase.AFTER_COMMIT,
                    () -> FencedCalls.fence(store, r, zombie, () -> insert(r, zombie, "zombie")), refused));
            TransactionSynchronizationManager.registerSynchronization(calling(Phase.AFTER_COMMIT,
                    () -> FencedCalls.fence(store, r2, good, () -> insert(r2, good, "good")), accepted));
        });
        assertThat(refused[0]).isInstanceOf(StaleTokenException.class);
        assertThat(accepted[0]).isNull();
        assertThat(tokens(r)).containsExactly(34L);
        assertThat(tokens(r2)).containsExactly(5L);
    }

    /** A second store's first call, made in a beforeCommit ordered before this mode's: refused, nothing written. */
    @Test
    void aSecondStoresFirstCallInAnEarlierOrderedBeforeCommit() {
        String r = "cbk-" + UUID.randomUUID();
        String a = "cbk-" + UUID.randomUUID();
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
        assertThat(thrown).isInstanceOf(StaleTokenException.class);
        assertThat(tokens(r)).containsExactly(34L);
        assertThat(tokens(a)).isEmpty();
    }

    /** A REQUIRES_NEW transaction inside a beforeCommit callback: its stale call is refused, the outer commits. */
    @Test
    void aStaleCallInARequiresNewInsideBeforeCommit() {
        String r = "cbk-" + UUID.randomUUID();
        String a = "cbk-" + UUID.randomUUID();
        fencedInsert(store, r, new FencingToken(r, 34, "new"));
        FencingToken zombie = new FencingToken(r, 33, "zombie");
        Throwable[] inCallback = new Throwable[1];
        TransactionTemplate requiresNew = new TransactionTemplate(tm);
        requiresNew.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        new TransactionTemplate(tm).executeWithoutResult(s -> {
            FencingToken first = new FencingToken(a, 1, "h1");
            FencedCalls.fence(store, a, first, () -> insert(a, first, "body"));
            TransactionSynchronizationManager.registerSynchronization(calling(Phase.BEFORE_COMMIT,
                    () -> requiresNew.executeWithoutResult(x -> FencedCalls.fence(store, r, zombie,
                            () -> insert(r, zombie, "zombie"))), inCallback));
        });
        assertThat(inCallback[0]).isInstanceOf(StaleTokenException.class);
        assertThat(tokens(r)).containsExactly(34L);
        assertThat(tokens(a)).containsExactly(1L);
    }

    /** Control: the default mode refuses the same afterCommit call. */
    @Test
    void controlTheDefaultModeRefusesTheSameAfterCommitCall() {
        JdbcFenceStore defaultStore = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable).build();
        defaultStore.verify();
        String r = "cbk-" + UUID.randomUUID();
        fencedInsert(store, r, new FencingToken(r, 34, "new"));
        FencingToken zombie = new FencingToken(r, 33, "zombie");
        Throwable[] inCallback = new Throwable[1];
        new TransactionTemplate(tm).executeWithoutResult(s -> TransactionSynchronizationManager
                .registerSynchronization(calling(Phase.AFTER_COMMIT, () -> FencedCalls.fence(defaultStore, r, zombie,
                        () -> insert(r, zombie, "zombie")), inCallback)));
        assertThat(tokens(r)).containsExactly(34L);
        assertThat(inCallback[0]).isInstanceOf(StaleTokenException.class);
    }
}
