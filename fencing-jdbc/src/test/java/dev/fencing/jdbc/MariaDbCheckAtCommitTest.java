package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingConfigurationException;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.OutOfRangeTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@code checkAtCommit(true)} on MariaDB beyond the contract: the driver property the mode needs is checked at build
 * time; a refused token (stale, duplicate, out of range) leaves nothing of its transaction and is told apart; the
 * lock wait bound applies at commit; a synchronization registered after the first check keeps its writes fenced;
 * and on the wire the checks and {@code COMMIT} are one command of the driver,
 * so a fenced transaction takes as many round trips as the same one unfenced.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(90)
class MariaDbCheckAtCommitTest {

    /** The JDBC URL property the mode needs on MariaDB. */
    static final String MULTI_QUERIES = "allowMultiQueries=true";

    private HikariDataSource pool;
    private JdbcTemplate jdbc;
    private DataSourceTransactionManager tm;
    private String fenceTable;
    private String dataTable;
    private JdbcFenceStore store;
    private JdbcFenceAdmin admin;

    @BeforeAll
    void setUp() {
        pool = Database.MARIADB.newPoolWith(6, MULTI_QUERIES);
        jdbc = new JdbcTemplate(pool);
        tm = new DataSourceTransactionManager(pool);
        fenceTable = Database.uniqueTable("fence");
        dataTable = Database.uniqueTable("data");
        jdbc.execute(Database.MARIADB.createDataTable(dataTable));
        store = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable).createTableIfMissing(true)
                .checkAtCommit(true).build();
        store.verify();
        admin = new JdbcFenceAdmin(store);
    }

    @AfterAll
    void tearDown() {
        jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
        jdbc.execute("DROP TABLE IF EXISTS " + dataTable);
        pool.close();
    }

    private static String fresh() {
        return "at-commit-" + UUID.randomUUID();
    }

    private void insert(JdbcTemplate on, String r, FencingToken token, String v) {
        on.update("INSERT INTO " + dataTable + " (k, token, v) VALUES (?, ?, ?)", r, token.value(), v);
    }

    private List<Long> tokens(String r) {
        return jdbc.queryForList("SELECT token FROM " + dataTable + " WHERE k = ? ORDER BY id", Long.class, r);
    }

    private Map<String, Object> fenceRow(String r) {
        return jdbc.queryForMap("SELECT max_seen, holder, updated_at FROM " + fenceTable + " WHERE resource = ?", r);
    }

    private void fencedInsert(JdbcFenceStore s, String r, FencingToken token) {
        new TransactionTemplate(tm).executeWithoutResult(status -> fence(s, r, token,
                () -> insert(jdbc, r, token, "v")));
    }

    private static void fence(JdbcFenceStore s, String r, FencingToken token, Runnable body) {
        try {
            s.fence(r, token, () -> {
                body.run();
                return null;
            });
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void withoutAllowMultiQueriesTheBuildFailsNamingTheProperty() {
        try (HikariDataSource plain = Database.MARIADB.newPool(1)) {
            assertThatThrownBy(() -> JdbcFenceStore.builder(plain).table(fenceTable).checkAtCommit(true).build())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("MariaDB").hasMessageContaining(MULTI_QUERIES);
            // the default mode needs nothing of the kind
            assertThat(JdbcFenceStore.builder(plain).table(fenceTable).build().checksAtCommit()).isFalse();
        }
        assertThat(store.checksAtCommit()).isTrue();
    }

    @Test
    void aRefusedTokenLeavesNoTraceAndIsToldApart() {
        String r = fresh();
        fencedInsert(store, r, new FencingToken(r, 34, "b"));
        Map<String, Object> before = fenceRow(r);
        FencingToken zombie = new FencingToken(r, 33, "a");
        AtomicBoolean bodyRan = new AtomicBoolean();
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(tm).executeWithoutResult(status -> {
            fence(store, r, zombie, () -> {
                insert(jdbc, r, zombie, "first");
                insert(jdbc, r, zombie, "second");
                bodyRan.set(true);
            });
            insert(jdbc, r, zombie, "after the fenced call, same transaction");
        }));
        assertThat(bodyRan).as("the body runs before the verdict in this mode").isTrue();
        assertThat(thrown).isInstanceOfSatisfying(StaleTokenException.class, e -> {
            assertThat(e.presented()).isSameAs(zombie);
            assertThat(e.maxSeen()).isEqualTo(34);
            assertThat(e.afterBody()).as("refused at COMMIT, after the body ran").isTrue();
        });
        assertThat(tokens(r)).containsExactly(34L);
        assertThat(fenceRow(r)).isEqualTo(before);
        // the same token with another holder, and a token too far ahead for the bound, are refused as such
        assertThatThrownBy(() -> fencedInsert(store, r, new FencingToken(r, 34, "other")))
                .isInstanceOfSatisfying(DuplicateTokenException.class, e -> assertThat(e.maxSeen()).isEqualTo(34));
        JdbcFenceStore bounded = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable)
                .maxAdvance(10).checkAtCommit(true).build();
        assertThatThrownBy(() -> fencedInsert(bounded, r, new FencingToken(r, 45, "far")))
                .isInstanceOfSatisfying(OutOfRangeTokenException.class, e -> assertThat(e.maxSeen()).isEqualTo(34));
        assertThat(fenceRow(r)).isEqualTo(before);
        fencedInsert(bounded, r, new FencingToken(r, 44, "near"));
        assertThat(tokens(r)).containsExactly(34L, 44L);
        assertThat(admin.maxSeen(r)).hasValue(44);
        // the second of two checks in one transaction refused: neither body's rows, nor the first check, persist
        String r2 = fresh();
        fencedInsert(store, r2, new FencingToken(r2, 30, "x"));
        Map<String, Object> before2 = fenceRow(r2);
        String r3 = fresh();
        assertThatThrownBy(() -> new TransactionTemplate(tm).executeWithoutResult(s -> {
            fence(store, r3, new FencingToken(r3, 5, "new"), () -> insert(jdbc, r3, new FencingToken(r3, 5, "n"), "5"));
            fence(store, r2, new FencingToken(r2, 29, "old"), () -> insert(jdbc, r2, new FencingToken(r2, 29, "o"),
                    "29"));
        })).isInstanceOfSatisfying(StaleTokenException.class, e -> {
            assertThat(e.presented().resource()).isEqualTo(r2);
            assertThat(e.maxSeen()).isEqualTo(30);
        });
        assertThat(tokens(r2)).containsExactly(30L);
        assertThat(tokens(r3)).isEmpty();
        assertThat(fenceRow(r2)).isEqualTo(before2);
        assertThat(admin.maxSeen(r3)).isEmpty();
    }

    /**
     * A synchronization registered after the first fenced call may write in its own {@code beforeCommit}: the checks
     * then go without COMMIT (each still bounded by its own statement) and the transaction commits as usual, so
     * that synchronization's writes stay fenced.
     */
    @Test
    void aLaterSynchronizationsWritesStayInsideTheFencedTransaction() {
        for (long presented : new long[] {6, 3}) {
            String r = fresh();
            fencedInsert(store, r, new FencingToken(r, 4, "before"));
            FencingToken token = new FencingToken(r, presented, "h" + presented);
            Throwable thrown = catchThrowable(() -> new TransactionTemplate(tm).executeWithoutResult(s -> {
                fence(store, r, token, () -> insert(jdbc, r, token, "body"));
                TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                    @Override
                    public void beforeCommit(boolean readOnly) {
                        insert(jdbc, r, token, "outbox");
                    }
                });
            }));
            if (presented > 4) {
                assertThat(thrown).isNull();
                assertThat(tokens(r)).containsExactly(4L, presented, presented);
                assertThat(admin.maxSeen(r)).hasValue(presented);
            } else {
                assertThat(thrown).isInstanceOfSatisfying(StaleTokenException.class,
                        e -> assertThat(e.maxSeen()).isEqualTo(4));
                assertThat(tokens(r)).containsExactly(4L);
                assertThat(admin.maxSeen(r)).hasValue(4);
            }
        }
    }

    @Test
    void theLockWaitBoundAppliesToTheCheckAtCommit() throws Exception {
        JdbcFenceStore quick = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable)
                .lockTimeout(Duration.ofMillis(300)).checkAtCommit(true).build();
        String r = fresh();
        fencedInsert(quick, r, new FencingToken(r, 1, "a"));
        CountDownLatch locked = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> new TransactionTemplate(tm)
                .executeWithoutResult(s -> {
                    jdbc.queryForList("SELECT max_seen FROM " + fenceTable + " WHERE resource = ? FOR UPDATE", r);
                    locked.countDown();
                    try {
                        release.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                }));
        assertThat(locked.await(30, TimeUnit.SECONDS)).isTrue();
        long start = System.nanoTime();
        try {
            // MariaDB bounds lock waits in whole seconds: 300 ms waits 1 s
            assertThatThrownBy(() -> fencedInsert(quick, r, new FencingToken(r, 2, "b")))
                    .isInstanceOf(FenceBusyException.class).hasMessageContaining("300 ms");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
        } finally {
            release.countDown();
            holder.get(30, TimeUnit.SECONDS);
        }
        assertThat(tokens(r)).containsExactly(1L);
        assertThat(admin.maxSeen(r)).hasValue(1);
    }

    /**
     * On the wire: a fenced single-row insert transaction takes as many commands as the same transaction unfenced
     * (autocommit off, the insert, COMMIT, autocommit back on); its checks and COMMIT are one text sent as one
     * command, and the transaction's commit() then sends nothing (the driver knows the server left the transaction).
     * {@link RoundTripProxy#mariaDb} counts the commands the driver waits on.
     */
    @Test
    void theCheckTravelsWithCommitInTheSameRoundTrip() throws Exception {
        assertThat(countRoundTrips("")).as("autocommit off, INSERT, COMMIT, autocommit on").isEqualTo(4);
    }

    /**
     * With {@code useServerPrepStmts=true} Connector/J first sends the checks-and-COMMIT text as a server-side
     * prepare and execute (pipelined), which MariaDB refuses for several statements, and then resends it as a query:
     * measured with {@link RoundTripProxy#mariaDb}, 6 commands against the unfenced transaction's 4, a round trip of
     * its own on every commit. The mode's one promise is that round trip, so the build refuses the setting, naming it
     * (the checks would still be correct: only the round trip is lost).
     */
    @Test
    void withServerSidePreparedStatementsTheBuildFailsNamingTheProperty() {
        try (HikariDataSource server = Database.MARIADB.newPoolWith(1, MULTI_QUERIES + "&useServerPrepStmts=true")) {
            assertThatThrownBy(() -> JdbcFenceStore.builder(server).table(fenceTable).checkAtCommit(true).build())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("remove useServerPrepStmts=true");
            assertThat(JdbcFenceStore.builder(server).table(fenceTable).build().checksAtCommit()).isFalse();
        }
    }

    /** The round-trip comparison on a connection whose URL adds {@code properties}; returns the unfenced count. */
    private int countRoundTrips(String properties) throws Exception {
        try (RoundTripProxy proxy = RoundTripProxy.mariaDb("127.0.0.1", 3306)) {
            SingleConnectionDataSource single = new SingleConnectionDataSource("jdbc:mariadb://127.0.0.1:"
                    + proxy.port() + "/test?" + MULTI_QUERIES + properties, "root", "", true);
            try {
                DataSourceTransactionManager singleTm = new DataSourceTransactionManager(single);
                JdbcTemplate singleJdbc = new JdbcTemplate(single);
                JdbcFenceStore atCommit = JdbcFenceStore.builder(single).transactionManager(singleTm)
                        .table(fenceTable).checkAtCommit(true).build();
                atCommit.verify();
                JdbcFenceStore checkFirst = JdbcFenceStore.builder(single).transactionManager(singleTm)
                        .table(fenceTable).build();
                checkFirst.verify();
                TransactionTemplate tx = new TransactionTemplate(singleTm);
                // warm-up on another resource: server-side prepared statements are prepared once per connection
                String r0 = fresh();
                FencingToken w1 = new FencingToken(r0, 1, "w");
                FencingToken w2 = new FencingToken(r0, 2, "w");
                tx.executeWithoutResult(s -> insert(singleJdbc, r0, w1, "warm-up"));
                tx.executeWithoutResult(s -> fence(atCommit, r0, w1, () -> insert(singleJdbc, r0, w1, "warm-up")));
                tx.executeWithoutResult(s -> fence(checkFirst, r0, w2, () -> insert(singleJdbc, r0, w2, "warm-up")));
                String r = fresh();
                int[] unfenced = new int[3];
                int[] fencedAtCommit = new int[3];
                int[] fencedFirst = new int[3];
                for (int i = 0; i < 3; i++) {
                    long value = 1 + i * 2L;
                    proxy.reset();
                    tx.executeWithoutResult(s -> insert(singleJdbc, r, new FencingToken(r, 1, "u"), "unfenced"));
                    unfenced[i] = proxy.roundTrips();
                    FencingToken token = new FencingToken(r, value, "h");
                    proxy.reset();
                    tx.executeWithoutResult(s -> fence(atCommit, r, token, () -> insert(singleJdbc, r, token, "c")));
                    fencedAtCommit[i] = proxy.roundTrips();
                    List<String> sent = proxy.queries();
                    assertThat(sent).filteredOn(q -> q.contains("INSERT INTO " + fenceTable)).singleElement()
                            .satisfies(q -> assertThat(q).as("the checks and COMMIT in one text")
                                    .endsWith("COMMIT").contains("fencing-rejected"));
                    assertThat(sent).as("no COMMIT of its own").noneMatch(q -> q.trim().equalsIgnoreCase("COMMIT"));
                    FencingToken next = new FencingToken(r, value + 1, "h");
                    proxy.reset();
                    tx.executeWithoutResult(s -> fence(checkFirst, r, next, () -> insert(singleJdbc, r, next, "f")));
                    fencedFirst[i] = proxy.roundTrips();
                }
                assertThat(unfenced).containsOnly(unfenced[0]);
                assertThat(fencedAtCommit).as("autocommit off, insert, checks + COMMIT, autocommit on")
                        .isEqualTo(unfenced);
                assertThat(fencedFirst).as("the default mode's check is one round trip of its own")
                        .containsOnly(unfenced[0] + 1);
                assertThat(tokens(r)).containsExactly(1L, 1L, 2L, 1L, 3L, 4L, 1L, 5L, 6L);
                assertThat(admin.maxSeen(r)).hasValue(6);
                return unfenced[0];
            } finally {
                single.destroy();
            }
        }
    }
}
