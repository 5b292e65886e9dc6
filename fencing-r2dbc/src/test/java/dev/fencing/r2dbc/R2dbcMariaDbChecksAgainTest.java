package dev.fencing.r2dbc;

import dev.fencing.token.FencingToken;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.spi.ConnectionFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.reactive.TransactionalOperator;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On MariaDB a deadlock inside the fenced body rolls back the whole transaction, the fence row's lock and max_seen
 * with it, and the connection goes on in a new transaction. A body that goes on after the failed statement (a retry,
 * say) then wrote unfenced, and a stale write committed after a newer token's: the store runs the transaction's checks
 * again before its commit, and 33's commit fails as a conflict. For that the store turns the connection's auto-commit
 * off for the transaction (r2dbc-mariadb begins one with it on, so statements after the rollback committed at once);
 * the connection goes back to the pool with it on again, and checks still in force pass again unchanged.
 */
@Timeout(90)
class R2dbcMariaDbChecksAgainTest extends R2dbcMariaDbDeadlockFixture {

    R2dbcMariaDbChecksAgainTest() {
        super("r2dl");
    }

    /**
     * T1's fenced body takes row 1 of the lock table and then asks for row 2, which T3 (heavy, so not the victim)
     * holds while it waits for row 1: T1 loses the deadlock, its whole transaction rolls back, the body catches the
     * error, waits until T2 is done with token 34, and goes on.
     */
    private final class Deadlock {
        final CountDownLatch t1HasOne = new CountDownLatch(1);
        final CountDownLatch t3HasTwo = new CountDownLatch(1);
        final CountDownLatch t1Deadlocked = new CountDownLatch(1);
        final CountDownLatch t2Done = new CountDownLatch(1);
        String deadlock;
        CompletableFuture<String> t3;

        /** T1's body up to the deadlock it catches. */
        Mono<Void> caught() {
            return db.sql("UPDATE " + locks + " SET n = n + 1 WHERE id = 1").then()
                    .then(Mono.fromRunnable(t1HasOne::countDown))
                    .then(await(t3HasTwo, 700))                       // T3 now waits for row 1
                    .then(db.sql("UPDATE " + locks + " SET n = n + 1 WHERE id = 2").then()
                            .onErrorResume(e -> {
                                // the statement failed as the deadlock's loser: the body carries on (a retry, say)
                                deadlock = e.getClass().getSimpleName() + ": " + e.getMessage();
                                t1Deadlocked.countDown();
                                return await(t2Done, 0);
                            }));
        }

        /**
         * Runs T1 ({@code transaction}) and T3; T2 runs when T1 has lost; T1's outcome, once only 34's write is found
         * committed and T1's refused as a conflict.
         */
        String run(Flux<?> transaction, String r) throws Exception {
            CompletableFuture<String> t1 = CompletableFuture.supplyAsync(() -> {
                try {
                    return outcome(transaction);
                } finally {
                    t1Deadlocked.countDown();
                }
            }, x -> new Thread(x).start());
            Mono<Void> heavyThenCross = Flux.range(0, 50)
                    .concatMap(i -> db.sql("INSERT INTO " + heavy + " (v) SELECT seq FROM seq_1_to_100").then())
                    .then(db.sql("UPDATE " + locks + " SET n = n + 1 WHERE id = 2").then())
                    .then(Mono.fromRunnable(t3HasTwo::countDown))
                    .then(db.sql("UPDATE " + locks + " SET n = n + 1 WHERE id = 1").then());
            t3 = CompletableFuture.supplyAsync(() -> {
                try {
                    assertThat(t1HasOne.await(30, TimeUnit.SECONDS)).isTrue();
                    return outcome(transactions.transactional(heavyThenCross).flux());
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                } finally {
                    t3HasTwo.countDown();
                }
            }, x -> new Thread(x).start());
            assertThat(t1Deadlocked.await(60, TimeUnit.SECONDS)).isTrue();
            FencingToken t34 = new FencingToken(r, 34, "h34");
            String t2 = outcome(transactions.transactional(store.fence(r, t34, insert(r, t34).flux())));
            t2Done.countDown();
            String t1Out = t1.get(60, TimeUnit.SECONDS);
            assertThat(deadlock).as("T1's body lost a deadlock").isNotNull().containsIgnoringCase("deadlock");
            assertThat(t3.get(60, TimeUnit.SECONDS)).isEqualTo("ok");
            assertThat(t2).isEqualTo("ok");
            assertThat(written(r)).as("committed, T1 saying %s", t1Out).containsExactly(10L, 34L);
            assertThat(maxSeen(r)).isEqualTo(34L);
            assertThat(t1Out).contains("R2dbcFenceTransientException").contains(fence);
            return t1Out;
        }

        /** As {@link #run}, for a transaction whose errors an {@code onErrorContinue} may drop: the data counts. */
        void runSwallowed(Flux<?> transaction, String r) throws Exception {
            CompletableFuture<String> t1 = CompletableFuture.supplyAsync(() -> {
                try {
                    return outcome(transaction);
                } finally {
                    t1Deadlocked.countDown();
                }
            }, x -> new Thread(x).start());
            t3 = CompletableFuture.supplyAsync(() -> {
                try {
                    assertThat(t1HasOne.await(30, TimeUnit.SECONDS)).isTrue();
                    return outcome(transactions.transactional(Flux.range(0, 50)
                            .concatMap(i -> db.sql("INSERT INTO " + heavy + " (v) SELECT seq FROM seq_1_to_100").then())
                            .then(db.sql("UPDATE " + locks + " SET n = n + 1 WHERE id = 2").then())
                            .then(Mono.fromRunnable(t3HasTwo::countDown))
                            .then(db.sql("UPDATE " + locks + " SET n = n + 1 WHERE id = 1").then())).flux());
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                } finally {
                    t3HasTwo.countDown();
                }
            }, x -> new Thread(x).start());
            assertThat(t1Deadlocked.await(60, TimeUnit.SECONDS)).isTrue();
            FencingToken t34 = new FencingToken(r, 34, "h34");
            String t2 = outcome(transactions.transactional(store.fence(r, t34, insert(r, t34).flux())));
            t2Done.countDown();
            String t1Out = t1.get(60, TimeUnit.SECONDS);
            assertThat(deadlock).as("T1's body lost a deadlock").isNotNull().containsIgnoringCase("deadlock");
            assertThat(t3.get(60, TimeUnit.SECONDS)).isEqualTo("ok");
            assertThat(t2).isEqualTo("ok");
            assertThat(written(r)).as("committed, T1 saying %s", t1Out).containsExactly(10L, 34L);
            assertThat(maxSeen(r)).isEqualTo(34L);
        }
    }

    private String seeded(String r) {
        FencingToken seed = new FencingToken(r, 10, "seed");
        assertThat(outcome(transactions.transactional(store.fence(r, seed, insert(r, seed).flux())))).isEqualTo("ok");
        return r;
    }

    @Test
    void aDeadlockInsideTheBodyThatTheBodyGoesOnAfterDoesNotLetAStaleWriteCommitAfterANewerOne() throws Exception {
        String r = seeded("dl-" + System.nanoTime());
        FencingToken t33 = new FencingToken(r, 33, "h33");
        Deadlock deadlock = new Deadlock();
        String t1 = deadlock.run(transactions.transactional(store.fence(r, t33,
                deadlock.caught().then(insert(r, t33)).flux())), r);
        assertThat(t1).contains("run again before the commit, was refused");
    }

    /**
     * The usual "skip the failed items" pattern, {@code onErrorContinue} downstream of the transaction: it reaches the
     * operators upstream through the context, so the driver's deadlock error never reaches the body (which goes on in
     * a new transaction without the fence) and the refusal of the check run again before the commit was dropped by a
     * concatMap, and the commit went on: 33's write committed after 34's. The store rolls the transaction back before
     * it signals the refusal, so nothing of it commits, whether or not its caller hears of it.
     */
    @Test
    void onErrorContinueDownstreamOfTheTransactionDoesNotLetTheStaleWriteCommit() throws Exception {
        String r = seeded("dlc-" + System.nanoTime());
        FencingToken t33 = new FencingToken(r, 33, "h33");
        Deadlock deadlock = new Deadlock();
        Mono<Void> body = db.sql("UPDATE " + locks + " SET n = n + 1 WHERE id = 1").then()
                .then(Mono.fromRunnable(deadlock.t1HasOne::countDown))
                .then(await(deadlock.t3HasTwo, 700))                  // T3 now waits for row 1
                .then(db.sql("UPDATE " + locks + " SET n = n + 1 WHERE id = 2").then()) // the deadlock, dropped
                .then(Mono.defer(() -> await(deadlock.t2Done, 0)))
                .then(insert(r, t33));
        List<Throwable> dropped = new java.util.concurrent.CopyOnWriteArrayList<>();
        deadlock.runSwallowed(transactions.transactional(store.fence(r, t33, body.flux()))
                .onErrorContinue((e, o) -> {
                    dropped.add(e);
                    if (e.getMessage() != null && e.getMessage().contains("Deadlock")) {
                        deadlock.deadlock = e.getMessage();
                        deadlock.t1Deadlocked.countDown();
                    }
                }), r);
    }

    @Test
    void aNewerTokenCheckedAfterTheDeadlockDoesNotHideTheLostCheck() throws Exception {
        // after the deadlock the transaction checks 35, above T2's 34, for the same resource: the row is read first,
        // and is not at 33, so the stale write does not commit (a review found 35's check hiding the lost one)
        String r = seeded("dl35-" + System.nanoTime());
        FencingToken t33 = new FencingToken(r, 33, "h33");
        FencingToken t35 = new FencingToken(r, 35, "h35");
        Deadlock deadlock = new Deadlock();
        String t1 = deadlock.run(transactions.transactional(store.fence(r, t33,
                        deadlock.caught().then(insert(r, t33)).flux())
                .concatWith(store.fence(r, t35, insert(r, t35).flux()))), r);
        assertThat(t1).contains("(tokens [33]) on table '" + fence + "', looked at again before the check of token "
                + t35 + ", were lost: the row is at 34 (holder 'h34')");
    }

    @Test
    void twoFencedCallsAtOnceDoNotHideTheLostCheck() throws Exception {
        // 33's and 35's checks both pass before 33's body loses the deadlock, which undoes both; 34 commits, the body
        // writes under 33: the commit finds the row at neither of the transaction's tokens (a re-trial found 35's
        // check run again instead, and passing over 34)
        String r = seeded("dlmerge-" + System.nanoTime());
        FencingToken t33 = new FencingToken(r, 33, "h33");
        FencingToken t35 = new FencingToken(r, 35, "h35");
        Deadlock deadlock = new Deadlock();
        String t1 = deadlock.run(transactions.transactional(Flux.merge(
                store.fence(r, t33, deadlock.caught().then(insert(r, t33)).flux()),
                store.fence(r, t35, Flux.<Void>empty()))), r);
        assertThat(t1).contains("(tokens [33, 35]) on table '" + fence + "', looked at again before the commit, "
                + "were lost: the row is at 34 (holder 'h34')");
    }

    private Long maxSeen(String r) {
        return db.sql("SELECT max_seen FROM " + fence + " WHERE resource = ?").bind(0, r)
                .map(row -> row.get(0, Long.class)).one().block(STEP);
    }

    private List<Long> written(String r) {
        return db.sql("SELECT token FROM " + data + " WHERE k = ? ORDER BY id").bind(0, r)
                .map(row -> row.get(0, Long.class)).all().collectList().block(STEP);
    }

    @Test
    void theConnectionGoesBackToThePoolInAutoCommitAfterACommitAndAfterARollback() {
        ConnectionPool one = (ConnectionPool) ConnectionFactories.get(
                "r2dbc:pool:mariadb://root@127.0.0.1:3306/test?maxSize=1");
        try {
            DatabaseClient client = DatabaseClient.create(one);
            TransactionalOperator onOne = TransactionalOperator.create(new R2dbcTransactionManager(one));
            R2dbcFenceStore onOneStore = R2dbcFenceStore.builder(one).table(fence).build();
            Mono<String> autocommit = client.sql("SELECT @@autocommit").map(row -> String.valueOf(row.get(0))).one();
            String r = "ac-" + System.nanoTime();
            FencingToken first = new FencingToken(r, 1, "a");
            assertThat(outcome(onOne.transactional(onOneStore.fence(r, first,
                    client.sql("INSERT INTO " + data + " (k, token) VALUES ('" + r + "', 1)").then().flux()))))
                    .isEqualTo("ok");
            assertThat(autocommit.block(STEP)).isEqualTo("1");
            FencingToken second = new FencingToken(r, 2, "a");
            assertThat(outcome(onOne.transactional(onOneStore.fence(r, second, client.sql("INSERT INTO " + data
                    + " (k, token) VALUES ('" + r + "', 2)").then().then(Mono.<String>error(
                    new IllegalStateException("boom"))).flux())))).contains("boom");
            assertThat(autocommit.block(STEP)).isEqualTo("1");
            // a statement outside any transaction commits at once: another connection sees it
            client.sql("INSERT INTO " + data + " (k, token) VALUES ('" + r + "', 3)").then().block(STEP);
            assertThat(written(r)).containsExactly(1L, 3L);
            assertThat(maxSeen(r)).isEqualTo(1L);
        } finally {
            one.dispose();
        }
    }

    @Test
    void checksStillInForcePassAgain() {
        // two resources, a newer token for one of them, a second store on another table, and a savepoint rolled
        // back after its check: each check runs again with the last token it passed, and the commit goes through
        String r = "again-" + System.nanoTime();
        String s = r + "-s";
        String otherFence = R2dbcFenceStoreContract.uniqueTable("r2dl_fence2");
        run(R2dbcDialect.MARIADB.sql().createTableSql(otherFence));
        try {
            R2dbcFenceStore other = R2dbcFenceStore.builder(pool).table(otherFence).build();
            TransactionalOperator savepoint = TransactionalOperator.create(new R2dbcTransactionManager(pool),
                    new DefaultTransactionDefinition(TransactionDefinition.PROPAGATION_NESTED));
            FencingToken r5 = new FencingToken(r, 5, "a");
            FencingToken r6 = new FencingToken(r, 6, "b");
            FencingToken s7 = new FencingToken(s, 7, "c");
            Flux<String> work = store.fence(r, r5, insert(r, r5).thenReturn("r5").flux())
                    .concatWith(store.fence(r, r6, insert(r, r6).thenReturn("r6").flux()))
                    .concatWith(savepoint.transactional(store.fence(s, s7, insert(s, s7)
                            .then(Mono.<String>error(new IllegalStateException("undone"))).flux()))
                            .onErrorResume(IllegalStateException.class, e -> Flux.just("undone")))
                    .concatWith(other.fence(s, s7, insert(s, s7).thenReturn("other").flux()));
            assertThat(outcome(transactions.transactional(work))).isEqualTo("ok");
            assertThat(written(r)).containsExactly(5L, 6L);
            assertThat(written(s)).containsExactly(7L);
            assertThat(maxSeen(r)).isEqualTo(6L);
            // the savepoint's check was undone with it, and taken again before the commit
            assertThat(maxSeen(s)).isEqualTo(7L);
            assertThat(db.sql("SELECT max_seen FROM " + otherFence + " WHERE resource = ?").bind(0, s)
                    .map(row -> row.get(0, Long.class)).one().block(STEP)).isEqualTo(7L);
        } finally {
            run("DROP TABLE IF EXISTS " + otherFence);
        }
    }

    @Test
    void twoStoresOnTheSameTableShareTheTransactionsChecks() {
        // two store instances on one table see one row per resource: a transaction that checks 5 through one and 6
        // through the other commits, as with one store (a review found the first store's 5 run again, and refused)
        R2dbcFenceStore one = R2dbcFenceStore.builder(pool).table(fence).build();
        R2dbcFenceStore two = R2dbcFenceStore.builder(pool).table(fence).build();
        String r = "two-" + System.nanoTime();
        FencingToken t5 = new FencingToken(r, 5, "a");
        FencingToken t6 = new FencingToken(r, 6, "b");
        assertThat(outcome(transactions.transactional(one.fence(r, t5, insert(r, t5).flux())
                .concatWith(two.fence(r, t6, insert(r, t6).flux()))))).isEqualTo("ok");
        assertThat(written(r)).containsExactly(5L, 6L);
        assertThat(maxSeen(r)).isEqualTo(6L);
    }

    @Test
    void aCheckUndoneWithItsSavepointIsRunAgainAndRefusedOnceANewerTokenCommitted() throws Exception {
        // the known false refusal (stores.md): the check of 5 made in a savepoint that rolled back is still run again
        // before the commit; once another transaction committed 6 it is refused, a retryable conflict, although the
        // outer transaction kept nothing written under 5. The retry commits: a refused check is not held
        TransactionalOperator savepoint = TransactionalOperator.create(new R2dbcTransactionManager(pool),
                new DefaultTransactionDefinition(TransactionDefinition.PROPAGATION_NESTED));
        String r = "sp-" + System.nanoTime();
        String other = r + "-other";
        FencingToken t5 = new FencingToken(r, 5, "a");
        FencingToken t6 = new FencingToken(r, 6, "b");
        CountDownLatch undone = new CountDownLatch(1);
        CountDownLatch t2Done = new CountDownLatch(1);
        Flux<String> outer = savepoint.transactional(store.fence(r, t5, insert(r, t5)
                        .then(Mono.<String>error(new IllegalStateException("abandoned"))).flux()))
                .onErrorResume(IllegalStateException.class, e -> Flux.just("abandoned"))
                .concatWith(Mono.fromRunnable(undone::countDown))
                .concatWith(await(t2Done, 0).then(Mono.empty()))
                .concatWith(insert(other, t5).thenReturn("other work"));
        CompletableFuture<String> t1 = CompletableFuture.supplyAsync(() -> outcome(transactions.transactional(outer)),
                x -> new Thread(x).start());
        assertThat(undone.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(outcome(transactions.transactional(store.fence(r, t6, insert(r, t6).flux())))).isEqualTo("ok");
        t2Done.countDown();
        assertThat(t1.get(60, TimeUnit.SECONDS)).contains("R2dbcFenceTransientException")
                .contains("run again before the commit, was refused");
        assertThat(written(other)).isEmpty();
        assertThat(outcome(transactions.transactional(savepoint.transactional(store.fence(r, t5, insert(r, t5)
                        .thenReturn("not reached").flux()))
                .onErrorResume(e -> Flux.just("refused in the savepoint"))
                .concatWith(insert(other, t5).thenReturn("other work"))))).isEqualTo("ok");
        assertThat(written(other)).containsExactly(5L);
        assertThat(written(r)).containsExactly(6L);
    }

    @Test
    void aNewerTokensCheckUndoneWithItsSavepointLeavesTheEarlierOneInForce() {
        // several tokens for one resource, the last one's check undone by a savepoint: the row is back at the earlier
        // token, one the transaction checked, and the commit goes through (as in the JDBC store)
        TransactionalOperator savepoint = TransactionalOperator.create(new R2dbcTransactionManager(pool),
                new DefaultTransactionDefinition(TransactionDefinition.PROPAGATION_NESTED));
        String r = "spnewer-" + System.nanoTime();
        FencingToken t33 = new FencingToken(r, 33, "h33");
        FencingToken t34 = new FencingToken(r, 34, "h34");
        assertThat(outcome(transactions.transactional(store.fence(r, t33, insert(r, t33)
                .then(savepoint.transactional(store.fence(r, t34, insert(r, t34)
                                .then(Mono.<Void>error(new IllegalStateException("inner fails"))).flux()))
                        .onErrorResume(IllegalStateException.class, e -> Flux.empty()).then())
                .flux())))).isEqualTo("ok");
        assertThat(written(r)).containsExactly(33L);
        // the row was at 33, one of the transaction's tokens; then the last one's check ran again and took it to 34,
        // as a single token's check that a savepoint undid takes its row again
        assertThat(maxSeen(r)).isEqualTo(34L);
    }

    @Test
    void fencedTransactionsCancelledAtAnyPointGiveTheConnectionBackInAutoCommit() throws Exception {
        // a client that gives up (a timeout, a cancelled request) may cancel the transaction between the sending of
        // SET autocommit = 0 and its answer: Spring, seeing auto-commit still on, did not turn it on again, and the
        // pooled connection stayed at 0 for good, its later non-transactional writes never committed (a new user's
        // trial found it). The store puts the connection's own setting back after each transaction
        ConnectionPool one = (ConnectionPool) ConnectionFactories.get(
                "r2dbc:pool:mariadb://root@127.0.0.1:3306/test?maxSize=1");
        try {
            String r = "cancel-" + System.nanoTime();
            int replaced = 0;
            for (int i = 0; i < 60; i++) {
                TransactionalOperator onOne = TransactionalOperator.create(new R2dbcTransactionManager(one));
                R2dbcFenceStore onOneStore = R2dbcFenceStore.builder(one).table(fence).build();
                FencingToken token = new FencingToken(r, 1 + i, "h");
                outcome(onOne.transactional(onOneStore.fence(r, token, insert(r, token).flux()))
                        .timeout(Duration.ofNanos(200_000L * (i % 15))));
                // the cancelled transaction's rollback and clean-up run after the timeout's error: wait for them
                Thread.sleep(30);
                Mono<String> autocommit = DatabaseClient.create(one).sql("SELECT @@autocommit")
                        .map(row -> String.valueOf(row.get(0))).one();
                String setting;
                try {
                    setting = autocommit.block(Duration.ofSeconds(10));
                } catch (IllegalStateException lost) {
                    // a transaction cancelled as it takes its connection can keep it for ever (Spring R2DBC and
                    // r2dbc-pool, seen with PostgreSQL with and without the fence: R2dbcPostgresCancelledWriteTest),
                    // leaving this pool of one empty (a CI run waited 60 s here): a new pool takes its place, a
                    // few times at most; a connection given back at autocommit 0 still fails below
                    one.dispose();
                    one = (ConnectionPool) ConnectionFactories.get(
                            "r2dbc:pool:mariadb://root@127.0.0.1:3306/test?maxSize=1");
                    assertThat(++replaced).as("pools of one whose connection a cancelled transaction kept")
                            .isLessThanOrEqualTo(3);
                    continue;
                }
                assertThat(setting).as("after transaction %s", i).isEqualTo("1");
            }
            DatabaseClient client = DatabaseClient.create(one);
            // a transaction cancelled during its begin can leave the connection in a transaction for a moment, its
            // begin or rollback still on its way (under load, even after the connection said it was in none), with or
            // without a fenced call in it (Spring's cancellation, not the store's: plain transactions do it too): a
            // write landing in that one is rolled back with it. Under load that begin can also arrive after
            // everything gave the connection up, leaving it in a transaction no one ends (seen in a CI run: no plain
            // write committed in 10 s). So a transaction still open after a second is rolled back here, and the plain
            // write is tried again until one commits; a connection left at autocommit 0 for good never commits one,
            // rolled back or not
            Mono<String> inTransaction = client.sql("SELECT @@in_transaction").map(row -> String.valueOf(row.get(0)))
                    .one();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            List<Long> committed = List.of();
            while (committed.isEmpty() && System.nanoTime() < deadline) {
                long rollbackAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
                while (!"0".equals(inTransaction.block(STEP)) && System.nanoTime() < deadline) {
                    if (System.nanoTime() > rollbackAt) {
                        client.sql("ROLLBACK").then().block(STEP); // a begin left behind by a cancellation
                    }
                    Thread.sleep(50);
                }
                String plain = "plain-" + System.nanoTime();
                client.sql("INSERT INTO " + data + " (k, token) VALUES ('" + plain + "', 1)").then().block(STEP);
                Thread.sleep(100);
                committed = written(plain);
            }
            assertThat(committed).as("seen from another connection: committed").containsExactly(1L);
        } finally {
            one.dispose();
        }
    }
}
