package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Check-at-commit and fenced calls made from the transaction's own callbacks (a review found each stale write
 * committed): in a synchronization's {@code beforeCommit} after this mode's checks went (an outbox, a
 * {@code BEFORE_COMMIT} event listener), as the transaction's first fenced call in {@code beforeCommit}, and in
 * {@code afterCommit} (an {@code AFTER_COMMIT} listener; its write would commit with the connection's autocommit).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class CheckAtCommitCallbacksTest {

    private HikariDataSource pool;
    private JdbcTemplate jdbc;
    private DataSourceTransactionManager tm;
    private final String fenceTable = "cbk_fence_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    private final String dataTable = "cbk_data_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    private JdbcFenceStore store;

    @BeforeAll
    void setUp() {
        pool = Database.POSTGRESQL.newPool(4);
        jdbc = new JdbcTemplate(pool);
        tm = new DataSourceTransactionManager(pool);
        jdbc.execute(Database.POSTGRESQL.createDataTable(dataTable));
        store = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable).createTableIfMissing(true)
                .checkAtCommit(true).build();
        store.verify();
    }

    @AfterAll
    void tearDown() {
        jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
        jdbc.execute("DROP TABLE IF EXISTS " + dataTable);
        pool.close();
    }

    private void insert(String r, FencingToken token, String v) {
        jdbc.update("INSERT INTO " + dataTable + " (k, token, v) VALUES (?, ?, ?)", r, token.value(), v);
    }

    private List<Long> tokens(String r) {
        return jdbc.queryForList("SELECT token FROM " + dataTable + " WHERE k = ? ORDER BY id", Long.class, r);
    }

    private static void fence(JdbcFenceStore s, String r, FencingToken token, Runnable body) {
        FencedCalls.fence(s, r, token, body);
    }

    private void fencedInsert(String r, FencingToken token) {
        new TransactionTemplate(tm).executeWithoutResult(s -> fence(store, r, token, () -> insert(r, token, "v")));
    }

    /** A fenced call in a synchronization registered after the first fenced call (an outbox, a BEFORE_COMMIT one). */
    @Test
    @Timeout(60)
    void aStaleFencedCallInALaterSynchronizationsBeforeCommitIsRefused() {
        String r = "cbk-" + UUID.randomUUID();
        String other = "cbk-other-" + UUID.randomUUID();
        fencedInsert(r, new FencingToken(r, 34, "new"));
        FencingToken zombie = new FencingToken(r, 33, "zombie");
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(tm).executeWithoutResult(s -> {
            FencingToken first = new FencingToken(other, 1, "h1");
            fence(store, other, first, () -> insert(other, first, "body"));
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void beforeCommit(boolean readOnly) {
                    fence(store, r, zombie, () -> insert(r, zombie, "zombie"));
                }
            });
        }));
        System.out.println("later-sync: thrown=" + thrown + " tokens(r)=" + tokens(r) + " max_seen="
                + jdbc.queryForObject("SELECT max_seen FROM " + fenceTable + " WHERE resource = ?", Long.class, r));
        assertThat(tokens(r)).as("rows written for %s (max_seen 34)", r).containsExactly(34L);
        assertThat(thrown).isInstanceOf(StaleTokenException.class);
    }

    /** The first fenced call of the transaction made in a beforeCommit synchronization. */
    @Test
    @Timeout(60)
    void aStaleFirstFencedCallInABeforeCommitSynchronizationIsRefused() {
        String r = "cbk-" + UUID.randomUUID();
        fencedInsert(r, new FencingToken(r, 34, "new"));
        FencingToken zombie = new FencingToken(r, 33, "zombie");
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(tm).executeWithoutResult(s ->
                TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                    @Override
                    public void beforeCommit(boolean readOnly) {
                        fence(store, r, zombie, () -> insert(r, zombie, "zombie"));
                    }
                })));
        System.out.println("first-in-sync: thrown=" + thrown + " tokens(r)=" + tokens(r) + " max_seen="
                + jdbc.queryForObject("SELECT max_seen FROM " + fenceTable + " WHERE resource = ?", Long.class, r));
        assertThat(tokens(r)).as("rows written for %s (max_seen 34)", r).containsExactly(34L);
        assertThat(thrown).isInstanceOf(StaleTokenException.class);
    }

    /** A fenced call in afterCommit (the shape of an AFTER_COMMIT transactional event listener). */
    @Test
    @Timeout(60)
    void aStaleFencedCallInAnAfterCommitSynchronizationIsRefused() {
        String r = "cbk-" + UUID.randomUUID();
        String other = "cbk-other-" + UUID.randomUUID();
        fencedInsert(r, new FencingToken(r, 34, "new"));
        FencingToken zombie = new FencingToken(r, 33, "zombie");
        Throwable[] inCallback = new Throwable[1];
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(tm).executeWithoutResult(s -> {
            FencingToken first = new FencingToken(other, 1, "h1");
            fence(store, other, first, () -> insert(other, first, "body"));
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCommit() {
                    try {
                        fence(store, r, zombie, () -> insert(r, zombie, "zombie"));
                    } catch (Throwable e) {
                        inCallback[0] = e;
                    }
                }
            });
        }));
        System.out.println("after-commit: thrown=" + thrown + " inCallback=" + inCallback[0] + " tokens(r)="
                + tokens(r));
        assertThat(tokens(r)).as("rows written for %s (max_seen 34)", r).containsExactly(34L);
        assertThat(inCallback[0]).isInstanceOf(StaleTokenException.class);
    }

    /** The same callbacks with a newer token: the write and its check commit, and max_seen advances. */
    @Test
    @Timeout(60)
    void aNewerTokenInTheseCallbacksWritesAndAdvances() {
        String r = "cbk-" + UUID.randomUUID();
        fencedInsert(r, new FencingToken(r, 34, "new"));
        FencingToken inBeforeCommit = new FencingToken(r, 35, "h35");
        FencingToken inAfterCommit = new FencingToken(r, 36, "h36");
        new TransactionTemplate(tm).executeWithoutResult(s ->
                TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                    @Override
                    public void beforeCommit(boolean readOnly) {
                        fence(store, r, inBeforeCommit, () -> insert(r, inBeforeCommit, "before"));
                    }

                    @Override
                    public void afterCommit() {
                        fence(store, r, inAfterCommit, () -> insert(r, inAfterCommit, "after"));
                    }
                }));
        assertThat(tokens(r)).containsExactly(34L, 35L, 36L);
        assertThat(jdbc.queryForObject("SELECT max_seen FROM " + fenceTable + " WHERE resource = ?", Long.class, r))
                .isEqualTo(36L);
    }

    /** Control: the default mode in the same afterCommit callback refuses the stale token. */
    @Test
    @Timeout(60)
    void controlTheDefaultModeRefusesTheSameAfterCommitCall() {
        JdbcFenceStore defaultStore = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable).build();
        defaultStore.verify();
        String r = "cbk-" + UUID.randomUUID();
        String other = "cbk-other-" + UUID.randomUUID();
        fencedInsert(r, new FencingToken(r, 34, "new"));
        FencingToken zombie = new FencingToken(r, 33, "zombie");
        Throwable[] inCallback = new Throwable[1];
        new TransactionTemplate(tm).executeWithoutResult(s -> {
            FencingToken first = new FencingToken(other, 1, "h1");
            fence(defaultStore, other, first, () -> insert(other, first, "body"));
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCommit() {
                    try {
                        fence(defaultStore, r, zombie, () -> insert(r, zombie, "zombie"));
                    } catch (Throwable e) {
                        inCallback[0] = e;
                    }
                }
            });
        });
        System.out.println("control default after-commit: inCallback=" + inCallback[0] + " tokens(r)=" + tokens(r));
        assertThat(tokens(r)).containsExactly(34L);
        assertThat(inCallback[0]).isInstanceOf(StaleTokenException.class);
    }
}
