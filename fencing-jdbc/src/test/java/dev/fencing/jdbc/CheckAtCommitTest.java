package dev.fencing.jdbc;

import org.springframework.dao.DataIntegrityViolationException;
import dev.fencing.FencingException;
import dev.fencing.store.FenceStoreException;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingConfigurationException;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.OutsideTransactionException;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.OutOfRangeTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@code checkAtCommit(true)} on PostgreSQL beyond the contract: a rejected token leaves nothing of its transaction;
 * 33 never commits after 34 in every interleaving of bodies, checks and commits the test can force (including
 * against a default-mode store on the same table); the same resource checked twice in one transaction; the lock wait
 * bound at commit; the guard's counters count the commit-time verdict once; and the check costs no round trip of its
 * own (counted on the wire).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(90)
class CheckAtCommitTest {

    private HikariDataSource pool;
    private JdbcTemplate jdbc;
    private DataSourceTransactionManager tm;
    private String fenceTable;
    private String dataTable;
    private JdbcFenceStore store;
    private JdbcFenceStore defaultStore;
    private JdbcFenceAdmin admin;

    @BeforeAll
    void setUp() {
        pool = Database.POSTGRESQL.newPool(10);
        jdbc = new JdbcTemplate(pool);
        tm = new DataSourceTransactionManager(pool);
        fenceTable = Database.uniqueTable("fence");
        dataTable = Database.uniqueTable("data");
        jdbc.execute(Database.POSTGRESQL.createDataTable(dataTable));
        store = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable).createTableIfMissing(true)
                .checkAtCommit(true).build();
        store.verify();
        defaultStore = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable).build();
        defaultStore.verify();
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

    private void insert(String r, FencingToken token, String v) {
        jdbc.update("INSERT INTO " + dataTable + " (k, token, v) VALUES (?, ?, ?)", r, token.value(), v);
    }

    private List<Long> tokens(String r) {
        return jdbc.queryForList("SELECT token FROM " + dataTable + " WHERE k = ? ORDER BY id", Long.class, r);
    }

    private Map<String, Object> fenceRow(String r) {
        return jdbc.queryForMap("SELECT max_seen, holder, updated_at FROM " + fenceTable + " WHERE resource = ?", r);
    }

    private TransactionTemplate transaction() {
        return new TransactionTemplate(tm);
    }

    /** One transaction of the caller's: {@code store} fences a body inserting a row for the token. */
    private void fencedInsert(JdbcFenceStore s, String r, FencingToken token) {
        transaction().executeWithoutResult(status -> fence(s, r, token, () -> insert(r, token, "v")));
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

    /**
     * The concurrent transactions of these tests, a thread each: several block at once (on a latch, or on the fence
     * row's lock), which the common pool cannot promise (one worker on a 2-core machine under Java 25, three on 4
     * cores under Java 17).
     */
    private ExecutorService tasks;

    @BeforeEach
    void startTasks() {
        tasks = Executors.newCachedThreadPool(runnable -> {
            Thread thread = new Thread(runnable, "check-at-commit-test");
            thread.setDaemon(true);
            return thread;
        });
    }

    @AfterEach
    void stopTasks() {
        tasks.shutdownNow();
    }

    private <T> CompletableFuture<T> async(Supplier<T> task) {
        return CompletableFuture.supplyAsync(task, tasks);
    }

    private CompletableFuture<Void> asyncRun(Runnable task) {
        return CompletableFuture.runAsync(task, tasks);
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(30, TimeUnit.SECONDS)).as("latch").isTrue();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aRejectedTokenLeavesNoRowOfTheBodyAndMaxSeenUnchanged() {
        String r = fresh();
        fencedInsert(store, r, new FencingToken(r, 34, "b"));
        Map<String, Object> before = fenceRow(r);
        FencingToken zombie = new FencingToken(r, 33, "a");
        AtomicBoolean bodyRan = new AtomicBoolean();
        Throwable thrown = catchThrowable(() -> transaction().executeWithoutResult(status -> {
            fence(store, r, zombie, () -> {
                insert(r, zombie, "first");
                insert(r, zombie, "second");
                bodyRan.set(true);
            });
            insert(r, zombie, "after the fenced call, same transaction");
        }));
        assertThat(bodyRan).as("the body runs before the verdict in this mode").isTrue();
        assertThat(thrown).isInstanceOfSatisfying(StaleTokenException.class, e -> {
            assertThat(e.presented()).isSameAs(zombie);
            assertThat(e.maxSeen()).isEqualTo(34);
            assertThat(e.afterBody()).as("refused at COMMIT, after the body ran").isTrue();
            assertThat(e.getMessage()).contains("checked at the transaction's commit, after the method ran");
        });
        assertThat(tokens(r)).containsExactly(34L);
        assertThat(fenceRow(r)).isEqualTo(before);
        // duplicate and out of range are told apart too
        assertThatThrownBy(() -> fencedInsert(store, r, new FencingToken(r, 34, "other")))
                .isInstanceOfSatisfying(DuplicateTokenException.class, e -> assertThat(e.maxSeen()).isEqualTo(34));
        JdbcFenceStore bounded = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable)
                .maxAdvance(10).checkAtCommit(true).build();
        assertThatThrownBy(() -> fencedInsert(bounded, r, new FencingToken(r, 45, "far")))
                .isInstanceOfSatisfying(OutOfRangeTokenException.class, e -> assertThat(e.maxSeen()).isEqualTo(34));
        fencedInsert(bounded, r, new FencingToken(r, 44, "near"));
        assertThat(tokens(r)).containsExactly(34L, 44L);
    }

    @Test
    void thirtyFourCommitsWhileThirtyThreeIsInItsBodyThenThirtyThreeIsRejected() throws Exception {
        String r = fresh();
        CountDownLatch bodyDone = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        CompletableFuture<Throwable> t33 = async(() -> catchThrowable(() -> transaction()
                .executeWithoutResult(status -> fence(store, r, new FencingToken(r, 33, "a"), () -> {
                    insert(r, new FencingToken(r, 33, "a"), "33");
                    bodyDone.countDown();
                    await(go);
                }))));
        await(bodyDone);
        fencedInsert(store, r, new FencingToken(r, 34, "b"));
        go.countDown();
        assertThat(t33.get(30, TimeUnit.SECONDS)).isInstanceOf(StaleTokenException.class);
        assertThat(tokens(r)).containsExactly(34L);
        assertThat(admin.maxSeen(r)).hasValue(34);
    }

    @Test
    void thirtyThreeCommitsWhileThirtyFourIsInItsBodyThenBothCommitInTokenOrder() throws Exception {
        String r = fresh();
        CountDownLatch bodyDone = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        CompletableFuture<Throwable> t34 = async(() -> catchThrowable(() -> transaction()
                .executeWithoutResult(status -> fence(store, r, new FencingToken(r, 34, "b"), () -> {
                    insert(r, new FencingToken(r, 34, "b"), "34");
                    bodyDone.countDown();
                    await(go);
                }))));
        await(bodyDone);
        fencedInsert(store, r, new FencingToken(r, 33, "a")); // commits first: accepted
        assertThat(admin.maxSeen(r)).hasValue(33);
        go.countDown();
        assertThat(t34.get(30, TimeUnit.SECONDS)).isNull();
        assertThat(admin.maxSeen(r)).hasValue(34);
        assertThat(tokens(r)).containsExactlyInAnyOrder(33L, 34L); // 34 inserted first, committed second
    }

    /**
     * Both transactions reach their commit while a third one holds the fence row, so both checks queue on its lock;
     * whichever the database lets through first, 33 never becomes visible after 34 (a reader polls throughout).
     */
    @Test
    void checksQueuedOnTheFenceRowNeverLetThirtyThreeCommitAfterThirtyFour() throws Exception {
        for (int round = 0; round < 6; round++) {
            String r = fresh();
            fencedInsert(store, r, new FencingToken(r, 10, "first"));
            List<List<Long>> seen = Collections.synchronizedList(new ArrayList<>());
            AtomicBoolean polling = new AtomicBoolean(true);
            CompletableFuture<Void> reader = asyncRun(() -> {
                // stopped by the flag, or by the interrupt of stopTasks() when the test failed before clearing it
                while (polling.get() && !Thread.currentThread().isInterrupted()) {
                    seen.add(tokens(r));
                }
            });
            TransactionTemplate holder = transaction();
            CountDownLatch locked = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CompletableFuture<Void> lockHolder = asyncRun(() -> holder.executeWithoutResult(s -> {
                jdbc.queryForList("SELECT max_seen FROM " + fenceTable + " WHERE resource = ? FOR UPDATE", r);
                locked.countDown();
                await(release);
            }));
            await(locked);
            long first = round % 2 == 0 ? 33 : 34;
            long second = 67 - first;
            CompletableFuture<Throwable> a = async(() -> catchThrowable(() ->
                    fencedInsert(store, r, new FencingToken(r, first, "h" + first))));
            waitForLockWaiters(1);
            CompletableFuture<Throwable> b = async(() -> catchThrowable(() ->
                    fencedInsert(store, r, new FencingToken(r, second, "h" + second))));
            waitForLockWaiters(2);
            release.countDown();
            lockHolder.get(30, TimeUnit.SECONDS);
            Throwable f33 = (first == 33 ? a : b).get(30, TimeUnit.SECONDS);
            Throwable f34 = (first == 34 ? a : b).get(30, TimeUnit.SECONDS);
            polling.set(false);
            reader.get(30, TimeUnit.SECONDS);
            assertThat(f34).as("34 is accepted in any order").isNull();
            seen.add(tokens(r));
            boolean saw34Alone = false;
            for (List<Long> snapshot : seen) {
                if (saw34Alone) {
                    assertThat(snapshot).as("33 appeared after 34 had committed").doesNotContain(33L);
                }
                saw34Alone |= snapshot.contains(34L) && !snapshot.contains(33L);
            }
            if (f33 == null) {
                assertThat(tokens(r)).containsExactlyInAnyOrder(10L, 33L, 34L);
            } else {
                assertThat(f33).isInstanceOf(StaleTokenException.class);
                assertThat(tokens(r)).containsExactlyInAnyOrder(10L, 34L);
            }
            assertThat(admin.maxSeen(r)).hasValue(34);
        }
    }

    private void waitForLockWaiters(int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            Long waiting = jdbc.queryForObject("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    + " AND query LIKE ?", Long.class, "%INSERT INTO " + fenceTable + "%");
            if (waiting != null && waiting >= n) {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError(n + " checks never queued on the fence row");
    }

    @Test
    void againstADefaultModeStoreOnTheSameTableThirtyThreeNeverCommitsAfterThirtyFour() throws Exception {
        // 34 in the default mode holds the fence row through its body; 33 at commit queues behind it, is rejected
        String r = fresh();
        CountDownLatch inBody = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        CompletableFuture<Throwable> t34 = async(() -> catchThrowable(() -> transaction()
                .executeWithoutResult(status -> fence(defaultStore, r, new FencingToken(r, 34, "b"), () -> {
                    insert(r, new FencingToken(r, 34, "b"), "34");
                    inBody.countDown();
                    await(go);
                }))));
        await(inBody);
        CompletableFuture<Throwable> t33 = async(() -> catchThrowable(() ->
                fencedInsert(store, r, new FencingToken(r, 33, "a"))));
        waitForLockWaiters(1);
        go.countDown();
        assertThat(t34.get(30, TimeUnit.SECONDS)).isNull();
        assertThat(t33.get(30, TimeUnit.SECONDS)).isInstanceOf(StaleTokenException.class);
        assertThat(tokens(r)).containsExactly(34L);
        // and the other way round: 34 committed at commit, a default-mode 33 is refused before its body
        String r2 = fresh();
        fencedInsert(store, r2, new FencingToken(r2, 34, "b"));
        AtomicBoolean ran = new AtomicBoolean();
        assertThatThrownBy(() -> fencedInsert(defaultStore, r2, new FencingToken(r2, 33, "a")) )
                .isInstanceOf(StaleTokenException.class);
        assertThat(ran).isFalse();
        assertThat(tokens(r2)).containsExactly(34L);
    }

    @Test
    void theSameResourceCheckedTwiceInOneTransactionIsCheckedInCallOrder() {
        String r = fresh();
        FencingToken t33 = new FencingToken(r, 33, "a");
        FencingToken t34 = new FencingToken(r, 34, "b");
        transaction().executeWithoutResult(s -> {
            fence(store, r, t33, () -> insert(r, t33, "33"));
            fence(store, r, t34, () -> insert(r, t34, "34"));
        });
        assertThat(tokens(r)).containsExactly(33L, 34L);
        assertThat(admin.maxSeen(r)).hasValue(34);
        // a nested call with the same token: both checks accept (same holder), one commit
        transaction().executeWithoutResult(s -> fence(store, r, t34, () -> fence(store, r, t34,
                () -> insert(r, t34, "34 nested"))));
        assertThat(tokens(r)).containsExactly(33L, 34L, 34L);
        // a newer token then an older one: the older check fails and with it the whole transaction
        String r2 = fresh();
        fencedInsert(store, r2, new FencingToken(r2, 30, "x"));
        Map<String, Object> before = fenceRow(r2);
        assertThatThrownBy(() -> transaction().executeWithoutResult(s -> {
            fence(store, r2, new FencingToken(r2, 40, "new"), () -> insert(r2, new FencingToken(r2, 40, "new"), "40"));
            fence(store, r2, new FencingToken(r2, 35, "old"), () -> insert(r2, new FencingToken(r2, 35, "old"), "35"));
        })).isInstanceOfSatisfying(StaleTokenException.class, e -> {
            assertThat(e.presented().value()).isEqualTo(35);
            assertThat(e.maxSeen()).isEqualTo(40); // as the check saw it: 40 checked first, in the same statement
        });
        assertThat(tokens(r2)).containsExactly(30L);
        assertThat(fenceRow(r2)).isEqualTo(before);
    }

    @Test
    void theLockWaitBoundAppliesToTheCheckAtCommit() throws Exception {
        JdbcFenceStore quick = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable)
                .lockTimeout(Duration.ofMillis(300)).checkAtCommit(true).build();
        String r = fresh();
        fencedInsert(quick, r, new FencingToken(r, 1, "a"));
        CountDownLatch locked = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Void> holder = asyncRun(() -> transaction().executeWithoutResult(s -> {
            jdbc.queryForList("SELECT max_seen FROM " + fenceTable + " WHERE resource = ? FOR UPDATE", r);
            locked.countDown();
            await(release);
        }));
        await(locked);
        long start = System.nanoTime();
        try {
            assertThatThrownBy(() -> fencedInsert(quick, r, new FencingToken(r, 2, "b")))
                    .isInstanceOf(FenceBusyException.class).hasMessageContaining("300 ms")
                    .satisfies(e -> assertThat(((FenceBusyException) e).afterBody())
                            .as("waited at COMMIT, after the body ran").isTrue());
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
            // the same when the store opened the transaction itself: busy, not turned into a commit failure
            FencingToken t3 = new FencingToken(r, 3, "c");
            assertThatThrownBy(() -> fence(quick, r, t3, () -> insert(r, t3, "own transaction")))
                    .isInstanceOf(FenceBusyException.class).hasMessageContaining("300 ms");
        } finally {
            release.countDown();
            holder.get(30, TimeUnit.SECONDS);
        }
        assertThat(tokens(r)).containsExactly(1L);
        assertThat(admin.maxSeen(r)).hasValue(1);
        // the caller's own lock_timeout is left as it was for its later transactions on the connection
        String lockTimeout = transaction().execute(s -> jdbc.queryForObject("SHOW lock_timeout", String.class));
        assertThat(lockTimeout).isEqualTo("0");
    }

    @Test
    void theGuardCountsTheCommitTimeVerdictOnce() throws Throwable {
        String r = fresh();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        FencePoint point = new FencePoint("Repo.save(Note)", r, null, null, false, new FencingMetrics(registry));
        List<TokenRejectedException> heard = new ArrayList<>();
        FenceGuard guard = FenceGuard.builder(store).rejectionListener(heard::add).build();
        FencingToken t5 = new FencingToken(r, 5, "a");
        transaction().executeWithoutResult(s -> {
            guarded(guard, point, t5, () -> insert(r, t5, "5"));
            assertThat(count(registry, "accepted")).as("no verdict before the commit").isZero();
        });
        assertThat(count(registry, "accepted")).isEqualTo(1);
        FencingToken t4 = new FencingToken(r, 4, "z");
        Throwable thrown = catchThrowable(() -> transaction().executeWithoutResult(s ->
                guarded(guard, point, t4, () -> insert(r, t4, "4"))));
        assertThat(thrown).isInstanceOfSatisfying(StaleTokenException.class,
                e -> assertThat(e.operation()).isEqualTo("Repo.save(Note)"));
        assertThat(heard).containsExactly((TokenRejectedException) thrown);
        assertThat(count(registry, "stale")).isEqualTo(1);
        assertThat(count(registry, "accepted")).isEqualTo(1);
        assertThat(count(registry, "error")).isZero();
        // without a caller's transaction the store's own commits, and the verdict comes out of the guard itself
        FencingToken t6 = new FencingToken(r, 6, "b");
        guarded(guard, point, t6, () -> insert(r, t6, "6"));
        assertThat(count(registry, "accepted")).isEqualTo(2);
        assertThatThrownBy(() -> guarded(guard, point, t4, () -> insert(r, t4, "4 again")))
                .isInstanceOfSatisfying(StaleTokenException.class, e -> assertThat(e.afterBody())
                        .as("still after the body once the guard named the method").isTrue())
                .hasMessageContaining("Repo.save(Note)");
        assertThat(count(registry, "stale")).isEqualTo(2);
        // a body that fails rolls back before any check: no verdict, nothing counted
        FencingToken t7 = new FencingToken(r, 7, "c");
        assertThatThrownBy(() -> guarded(guard, point, t7, () -> {
            throw new IllegalStateException("body failed");
        })).hasMessage("body failed");
        assertThat(count(registry, "accepted") + count(registry, "stale") + count(registry, "error")).isEqualTo(4);
        assertThat(heard).hasSize(2);
        assertThat(tokens(r)).containsExactly(5L, 6L);
    }

    /**
     * A transaction that rolls back (its body threw, the caller threw after the fenced call, or it was marked
     * rollback-only) sends none of its checks: no verdict, nothing counted or heard, no wait for a fence row another
     * transaction holds. They were sent by the rollback's beforeCompletion: a stale token whose body failed was
     * counted stale and heard by the rejection listener, and the rollback waited the whole lock wait bound behind a
     * held row, then counted busy (from a red-team review).
     */
    @Test
    void aTransactionThatRollsBackSendsNoChecks() throws Exception {
        String r = fresh();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        FencePoint point = new FencePoint("Repo.save(Note)", r, null, null, false, new FencingMetrics(registry));
        List<TokenRejectedException> heard = new ArrayList<>();
        FenceGuard guard = FenceGuard.builder(store).rejectionListener(heard::add).build();
        FencingToken t34 = new FencingToken(r, 34, "a");
        transaction().executeWithoutResult(s -> guarded(guard, point, t34, () -> insert(r, t34, "34")));
        FencingToken t33 = new FencingToken(r, 33, "z");
        assertThatThrownBy(() -> transaction().executeWithoutResult(s -> guarded(guard, point, t33, () -> {
            insert(r, t33, "33");
            throw new IllegalStateException("body failed");
        }))).hasMessage("body failed");
        assertThatThrownBy(() -> transaction().executeWithoutResult(s -> {
            guarded(guard, point, t33, () -> insert(r, t33, "33"));
            throw new IllegalArgumentException("caller failed");
        })).hasMessage("caller failed");
        transaction().executeWithoutResult(s -> {
            guarded(guard, point, t33, () -> insert(r, t33, "33"));
            s.setRollbackOnly();
        });
        assertThat(count(registry, "stale")).as("no verdict for a transaction that rolled back").isZero();
        assertThat(heard).isEmpty();
        // a rollback while another transaction holds the fence row does not wait for it
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        FencingToken t35 = new FencingToken(r, 35, "b");
        CompletableFuture<Void> holder = asyncRun(() -> transaction().executeWithoutResult(s ->
                fence(defaultStore, r, t35, () -> {
                    held.countDown();
                    await(release);
                })));
        await(held);
        FencingToken t36 = new FencingToken(r, 36, "c");
        long start = System.nanoTime();
        Throwable rolledBack = catchThrowable(() -> transaction().executeWithoutResult(s ->
                guarded(guard, point, t36, () -> {
                    insert(r, t36, "36");
                    throw new IllegalStateException("body failed");
                })));
        long millis = (System.nanoTime() - start) / 1_000_000;
        release.countDown();
        holder.get(30, TimeUnit.SECONDS);
        assertThat(rolledBack).hasMessage("body failed");
        assertThat(millis).as("the rollback waited for the held fence row").isLessThan(
                store.lockTimeout().toMillis() / 2);
        assertThat(count(registry, "busy") + count(registry, "stale") + count(registry, "error")).isZero();
        assertThat(tokens(r)).containsExactly(34L);
        assertThat(admin.maxSeen(r)).hasValue(35);
    }

    /**
     * A transaction with more fenced calls than one statement text can carry (a batch job fencing each save: 7
     * parameters a check, pgjdbc takes at most 65,535 in a statement) commits: the checks go in several texts, the
     * last one with COMMIT. Every such transaction failed as "could not run", whatever its retries (from a red-team
     * review). A rejected check in a later text still refuses the whole transaction, naming its resource.
     */
    @Test
    void aTransactionWithMoreChecksThanOneTextTakesCommitsAndIsStillRefusedWhole() {
        String batch = fresh();
        int calls = 9_500;
        transaction().executeWithoutResult(s -> {
            for (int i = 0; i < calls; i++) {
                String r = batch + ":" + i;
                fence(store, r, new FencingToken(r, 5, "a"), () -> { });
            }
            insert(batch, new FencingToken(batch, 5, "a"), "batch");
        });
        assertThat(tokens(batch)).containsExactly(5L);
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + fenceTable + " WHERE resource LIKE ?", Long.class,
                batch + ":%")).isEqualTo(calls);
        String last = batch + ":" + (calls - 1);
        Throwable thrown = catchThrowable(() -> transaction().executeWithoutResult(s -> {
            for (int i = 0; i < calls; i++) {
                String r = batch + ":" + i;
                fence(store, r, new FencingToken(r, r.equals(last) ? 4 : 6, "b"), () -> { });
            }
            insert(batch, new FencingToken(batch, 6, "b"), "refused batch");
        }));
        assertThat(thrown).isInstanceOfSatisfying(StaleTokenException.class,
                e -> assertThat(e.resource()).isEqualTo(last));
        assertThat(tokens(batch)).containsExactly(5L);
        assertThat(admin.maxSeen(batch + ":0")).hasValue(5);
    }

    /**
     * Checks that could not run at commit (here: a read-only transaction, which refuses the check's write) reach no
     * verdict: a FenceStoreException counted as error, as the default mode counts a check that could not run, and
     * nothing of the transaction persists. A deferred constraint violated by COMMIT itself is the transaction's own
     * failure: Spring's DataAccessException, not counted.
     */
    @Test
    void checksThatCouldNotRunAtCommitAreCountedAsErrors() {
        String r = fresh();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        FencePoint point = new FencePoint("Repo.find(long)", r, null, null, false, new FencingMetrics(registry));
        FenceGuard guard = FenceGuard.builder(store).build();
        FencingToken t5 = new FencingToken(r, 5, "a");
        // read-only without Spring knowing (a read-only transaction it knows of is refused before the body)
        Throwable thrown = catchThrowable(() -> transaction().executeWithoutResult(s -> guarded(guard, point, t5,
                () -> {
                    jdbc.execute("SET TRANSACTION READ ONLY");
                    jdbc.queryForList("SELECT v FROM " + dataTable + " WHERE k = ?", String.class, r);
                })));
        assertThat(thrown).isInstanceOf(FenceStoreException.class).hasMessageContaining("could not run")
                .hasMessageContaining("read-only");
        assertThat(count(registry, "error")).isEqualTo(1);
        assertThat(count(registry, "accepted")).isZero();
        assertThat(admin.maxSeen(r)).isEmpty();
        // a deferred constraint that fails at COMMIT: the check's verdict is not what failed
        String deferred = Database.uniqueTable("deferred");
        jdbc.execute("CREATE TABLE " + deferred + " (id INT PRIMARY KEY, parent INT REFERENCES " + deferred
                + "(id) DEFERRABLE INITIALLY DEFERRED)");
        try {
            Throwable atCommit = catchThrowable(() -> transaction().executeWithoutResult(s -> guarded(guard, point,
                    t5, () -> jdbc.update("INSERT INTO " + deferred + " (id, parent) VALUES (1, 42)"))));
            assertThat(atCommit).isInstanceOf(DataIntegrityViolationException.class)
                    .isNotInstanceOf(FencingException.class);
            assertThat(count(registry, "error")).isEqualTo(1);
            assertThat(admin.maxSeen(r)).isEmpty();
        } finally {
            jdbc.execute("DROP TABLE IF EXISTS " + deferred);
        }
    }

    /**
     * A connection that fails while the checks and their COMMIT are on the wire leaves the outcome unknown (the server
     * may have committed before the answer was lost): the message must not say the transaction rolled back.
     * Simulated: the statement carrying COMMIT fails as a lost connection does (SQLSTATE 08006) without being sent.
     */
    @Test
    void aConnectionLostWithTheCommitSentIsReportedAsUnknownNotAsRolledBack() {
        DataSource failing = new org.springframework.jdbc.datasource.DelegatingDataSource(pool) {
            @Override
            public Connection getConnection() throws SQLException {
                Connection real = super.getConnection();
                return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(),
                        new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                            if (method.getName().equals("prepareStatement") && args.length == 1
                                    && ((String) args[0]).contains("COMMIT")) {
                                throw new SQLException("An I/O error occurred while sending to the backend "
                                        + "(simulated)", "08006");
                            }
                            try {
                                return method.invoke(real, args);
                            } catch (java.lang.reflect.InvocationTargetException e) {
                                throw e.getCause();
                            }
                        });
            }
        };
        DataSourceTransactionManager failingTm = new DataSourceTransactionManager(failing);
        JdbcFenceStore onFailing = JdbcFenceStore.builder(failing).transactionManager(failingTm).table(fenceTable)
                .checkAtCommit(true).build();
        String r = fresh();
        FencingToken t5 = new FencingToken(r, 5, "a");
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(failingTm).executeWithoutResult(s ->
                fence(onFailing, r, t5, () -> new JdbcTemplate(failing).update("INSERT INTO " + dataTable
                        + " (k, token, v) VALUES (?, ?, ?)", r, 5L, "v"))));
        assertThat(thrown).isInstanceOf(FenceStoreException.class).hasMessageContaining(r)
                .hasMessageContaining("whether the transaction committed is not known")
                .hasMessageContaining("08006").hasMessageNotContaining("rolled back");
        assertThat(tokens(r)).as("here nothing was sent, so nothing committed").isEmpty();
    }

    private static void guarded(FenceGuard guard, FencePoint point, FencingToken token, Runnable body) {
        try (FencingScope ignored = FencingContext.bind(token)) {
            guard.invoke(point, new Object[0], () -> {
                body.run();
                return null;
            });
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new AssertionError(e);
        }
    }

    private static double count(SimpleMeterRegistry registry, String outcome) {
        var counter = registry.find("fencing.checks").tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    /**
     * On the wire: a fenced single-row insert transaction takes as many round trips as the same transaction unfenced
     * (the insert, then the check with COMMIT), and the commit really happened once (the driver's transaction state
     * is idle after it, so its commit() sends nothing; every row is there). {@link RoundTripProxy} counts the
     * requests the driver waits on.
     */
    @Test
    void theCheckTravelsWithCommitInTheSameRoundTrip() throws Exception {
        try (RoundTripProxy proxy = new RoundTripProxy("127.0.0.1", 5432)) {
            SingleConnectionDataSource single = new SingleConnectionDataSource(
                    "jdbc:postgresql://127.0.0.1:" + proxy.port() + "/test", "postgres", "", true);
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
                String r = fresh();
                String insert = "INSERT INTO " + dataTable + " (k, token, v) VALUES (?, ?, ?)";
                int[] unfenced = new int[3];
                int[] fencedAtCommit = new int[3];
                int[] fencedFirst = new int[3];
                for (int i = 0; i < 3; i++) {
                    long value = 1 + i * 2L;
                    proxy.reset();
                    tx.executeWithoutResult(s -> singleJdbc.update(insert, r, -1L, "unfenced"));
                    unfenced[i] = proxy.roundTrips();
                    FencingToken token = new FencingToken(r, value, "h");
                    proxy.reset();
                    tx.executeWithoutResult(s -> fence(atCommit, r, token,
                            () -> singleJdbc.update(insert, r, token.value(), "at commit")));
                    fencedAtCommit[i] = proxy.roundTrips();
                    assertThat(single.getConnection().unwrap(org.postgresql.core.BaseConnection.class)
                            .getTransactionState()).isEqualTo(org.postgresql.core.TransactionState.IDLE);
                    FencingToken next = new FencingToken(r, value + 1, "h");
                    proxy.reset();
                    tx.executeWithoutResult(s -> fence(checkFirst, r, next,
                            () -> singleJdbc.update(insert, r, next.value(), "check first")));
                    fencedFirst[i] = proxy.roundTrips();
                }
                assertThat(unfenced).containsOnly(2); // INSERT (with BEGIN), COMMIT
                assertThat(fencedAtCommit).as("insert; check + COMMIT").isEqualTo(unfenced);
                // the default mode: the check (lock bound set, upsert, bound put back: one text), the insert, COMMIT
                assertThat(fencedFirst).as("the default mode's check is one round trip of its own").containsOnly(3);
                assertThat(tokens(r)).containsExactly(-1L, 1L, 2L, -1L, 3L, 4L, -1L, 5L, 6L);
                assertThat(admin.maxSeen(r)).hasValue(6);
            } finally {
                single.destroy();
            }
        }
    }

    /**
     * A synchronization registered after the first fenced call would run its {@code beforeCommit} after the check's
     * COMMIT: the store then sends the checks without COMMIT and lets the transaction commit as usual, so that
     * synchronization's writes are still fenced.
     */
    @Test
    void aLaterSynchronizationsWritesStayInsideTheFencedTransaction() {
        for (long[] tokens : new long[][] {{5, 6}, {7, 3}}) {
            String r = fresh();
            fencedInsert(store, r, new FencingToken(r, 4, "before"));
            FencingToken token = new FencingToken(r, tokens[1], "h" + tokens[1]);
            Throwable thrown = catchThrowable(() -> transaction().executeWithoutResult(s -> {
                fence(store, r, token, () -> insert(r, token, "body"));
                TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                    @Override
                    public void beforeCommit(boolean readOnly) {
                        insert(r, token, "outbox");
                    }
                });
            }));
            if (tokens[1] > 4) {
                assertThat(thrown).isNull();
                assertThat(tokens(r)).containsExactly(4L, tokens[1], tokens[1]);
            } else {
                assertThat(thrown).isInstanceOf(StaleTokenException.class);
                assertThat(tokens(r)).containsExactly(4L);
            }
        }
        // and the connection's lock wait bound is back to the caller's after those checks
        String lockTimeout = transaction().execute(s -> jdbc.queryForObject("SHOW lock_timeout", String.class));
        assertThat(lockTimeout).isEqualTo("0");
    }

    @Test
    void aFencedCallInsideAJpaTransactionIsRefusedBeforeItsBody() {
        String r = fresh();
        Object key = new Object();
        AtomicBoolean ran = new AtomicBoolean();
        assertThatThrownBy(() -> transaction().executeWithoutResult(s -> {
            TransactionSynchronizationManager.bindResource(key, new EntityManagerHolder(true));
            try {
                fence(store, r, new FencingToken(r, 1, "a"), () -> ran.set(true));
            } finally {
                TransactionSynchronizationManager.unbindResource(key);
            }
        })).isInstanceOf(OutsideTransactionException.class).hasMessageContaining("JPA or Hibernate")
                .hasMessageContaining(r);
        assertThat(ran).isFalse();
        assertThat(admin.maxSeen(r)).isEmpty();
    }

    /**
     * An entity manager open for the whole web request (Spring Boot's default {@code spring.jpa.open-in-view}) is
     * bound without taking part in the JDBC transaction: it flushes nothing at its commit, so the check at commit
     * goes ahead (a new user's trial had every such call refused as a 503).
     */
    @Test
    void anEntityManagerOpenForTheRequestButNotInTheTransactionIsNoReasonToRefuse() {
        String r = fresh();
        Object key = new Object();
        TransactionSynchronizationManager.bindResource(key, new EntityManagerHolder(false));
        try {
            fencedInsert(store, r, new FencingToken(r, 3, "a"));
        } finally {
            TransactionSynchronizationManager.unbindResource(key);
        }
        assertThat(tokens(r)).containsExactly(3L);
        assertThat(admin.maxSeen(r)).hasValue(3);
    }

    /**
     * What docs/stores.md warns of: at commit, a fenced read orders nothing under READ COMMITTED. An older token's
     * write that commits between a newer holder's read and that holder's commit is accepted (nothing newer was seen
     * yet), and so is the newer holder's write, computed from what it read before: a lost update the default mode's
     * check at the read prevents. Under REPEATABLE READ the same interleaving is a conflict (the test below).
     */
    @Test
    void underReadCommittedAFencedReadDoesNotOrderAReadModifyWrite() {
        String r = fresh();
        fencedInsert(store, r, new FencingToken(r, 30, "first"));
        FencingToken t34 = new FencingToken(r, 34, "b");
        FencingToken t33 = new FencingToken(r, 33, "a");
        List<Long> read = new ArrayList<>();
        transaction().executeWithoutResult(s -> {
            fence(store, r, t34, () -> read.addAll(tokens(r))); // the fenced read
            TransactionTemplate zombie = transaction();
            zombie.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
            zombie.executeWithoutResult(x -> fence(store, r, t33, () -> insert(r, t33, "33"))); // commits now
            fence(store, r, t34, () -> insert(r, t34, "computed from " + read));
        });
        assertThat(read).as("34 read before 33 wrote").containsExactly(30L);
        assertThat(tokens(r)).as("both accepted, in token order").containsExactly(30L, 33L, 34L);
        assertThat(admin.maxSeen(r)).hasValue(34);
    }

    /** A resource fenced twice in one transaction (a fenced read and its write, say) is warned of, once per store. */
    @Test
    void aResourceFencedTwiceInOneTransactionIsWarnedOfOnce() {
        JdbcFenceStore fresh = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable)
                .checkAtCommit(true).build();
        String a = fresh();
        String b = fresh();
        transaction().executeWithoutResult(s -> {
            fence(fresh, a, new FencingToken(a, 1, "h"), () -> insert(a, new FencingToken(a, 1, "h"), "a"));
            fence(fresh, b, new FencingToken(b, 1, "h"), () -> insert(b, new FencingToken(b, 1, "h"), "b"));
        });
        assertThat(fresh.warnedOfRepeat()).as("two resources, once each").isFalse();
        transaction().executeWithoutResult(s -> {
            fence(fresh, a, new FencingToken(a, 2, "h"), () -> tokens(a));
            fence(fresh, a, new FencingToken(a, 2, "h"), () -> insert(a, new FencingToken(a, 2, "h"), "a2"));
        });
        assertThat(fresh.warnedOfRepeat()).isTrue();
        assertThat(tokens(a)).containsExactly(1L, 2L);
    }

    /**
     * Under REPEATABLE READ a check at commit whose snapshot predates another transaction's committed check of the
     * resource is a serialization failure: {@code conflict}, retryable, nothing persisted, as in the default mode.
     */
    @Test
    void underRepeatableReadAStaleSnapshotAtCommitIsAConflict() {
        for (long presented : new long[] {33, 35}) {
            String r = fresh();
            fencedInsert(store, r, new FencingToken(r, 30, "first"));
            TransactionTemplate rr = transaction();
            rr.setIsolationLevel(TransactionDefinition.ISOLATION_REPEATABLE_READ);
            FencingToken token = new FencingToken(r, presented, "late");
            Throwable thrown = catchThrowable(() -> rr.executeWithoutResult(s -> {
                tokens(r); // takes the snapshot
                TransactionTemplate other = transaction();
                other.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
                FencingToken t34 = new FencingToken(r, 34, "b");
                other.executeWithoutResult(x -> fence(store, r, t34, () -> insert(r, t34, "34"))); // commits now
                fence(store, r, token, () -> insert(r, token, "late"));
            }));
            assertThat(thrown).as("token " + presented).isInstanceOf(FenceConflictException.class);
            assertThat(((FenceConflictException) thrown).afterBody()).as("aborted at COMMIT, after the body ran")
                    .isTrue();
            assertThat(tokens(r)).containsExactly(30L, 34L);
            assertThat(admin.maxSeen(r)).hasValue(34);
        }
    }

    @Test
    void theOptionIsRefusedWhereItCannotKeepTheGuarantee() {
        try (HikariDataSource h2 = Database.H2.newPool(1)) {
            assertThatThrownBy(() -> JdbcFenceStore.builder(h2).table(Database.uniqueTable("f")).checkAtCommit(true)
                    .build())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("PostgreSQL only").hasMessageContaining("H2");
        }
        // MariaDB, whatever the driver's settings: a statement that commits implicitly in the body (DDL, TRUNCATE)
        // would commit the body's writes before the check, so a stale token's writes would persist
        for (String properties : new String[] {"", "allowMultiQueries=true"}) {
            try (HikariDataSource maria = properties.isEmpty() ? Database.MARIADB.newPool(1)
                    : Database.MARIADB.newPoolWith(1, properties)) {
                assertThatThrownBy(() -> JdbcFenceStore.builder(maria).table(Database.uniqueTable("f"))
                        .checkAtCommit(true).build())
                        .isInstanceOf(FencingConfigurationException.class)
                        .hasMessageContaining("not supported on MariaDB").hasMessageContaining("commits implicitly")
                        .hasMessageContaining("fencing.store.jdbc.check-at-commit");
            }
        }
        PlatformTransactionManager jpaLike = new PlatformTransactionManager() {
            @Override
            public TransactionStatus getTransaction(TransactionDefinition definition) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void commit(TransactionStatus status) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void rollback(TransactionStatus status) {
                throw new UnsupportedOperationException();
            }
        };
        assertThatThrownBy(() -> JdbcFenceStore.builder(pool).table(fenceTable).transactionManager(jpaLike)
                .checkAtCommit(true).build())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("DataSourceTransactionManager");
        assertThat(store.checksAtCommit()).isTrue();
        assertThat(defaultStore.checksAtCommit()).isFalse();
    }
}
