package dev.fencing.r2dbc;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A transaction that checked 33 and 35 for one resource loses a deadlock in its body, which goes on, reads something
 * (its new transaction's snapshot is taken then, after a duplicate of 35 committed) and writes under 33 while 36
 * commits. The commit's look at the row must be a locking read: a review found the snapshot's 35 accepted as the
 * transaction's own, and 33's write committed after 36's.
 */
@Timeout(120)
class R2dbcMariaDbSnapshotAfterDeadlockTest extends R2dbcMariaDbDeadlockFixture {

    R2dbcMariaDbSnapshotAfterDeadlockTest() {
        super("snapdl");
    }

    @Test
    void theCommitsLookAtTheRowIsALockingRead() throws Exception {
        String r = "snap-" + System.nanoTime();
        FencingToken seed = new FencingToken(r, 10, "seed");
        assertThat(outcome(transactions.transactional(store.fence(r, seed, insert(r, seed).flux())))).isEqualTo("ok");
        FencingToken t33 = new FencingToken(r, 33, "h33");
        FencingToken t35 = new FencingToken(r, 35, "h35");
        FencingToken t36 = new FencingToken(r, 36, "h36");
        CountDownLatch t1HasOne = new CountDownLatch(1);
        CountDownLatch t3HasTwo = new CountDownLatch(1);
        CountDownLatch t1Deadlocked = new CountDownLatch(1);
        CountDownLatch t5Done = new CountDownLatch(1);
        CountDownLatch t1Read = new CountDownLatch(1);
        CountDownLatch t2Done = new CountDownLatch(1);
        String[] deadlock = new String[1];

        Mono<Void> body = store.fence(r, t35, Flux.<Void>empty()).then()
                .then(db.sql("UPDATE " + locks + " SET n = n + 1 WHERE id = 1").then())
                .then(Mono.fromRunnable(t1HasOne::countDown))
                .then(await(t3HasTwo, 700))
                .then(db.sql("UPDATE " + locks + " SET n = n + 1 WHERE id = 2").then()
                        .onErrorResume(e -> {
                            deadlock[0] = e.getClass().getSimpleName() + ": " + e.getMessage();
                            t1Deadlocked.countDown();
                            // the body goes on: it reads something (the new transaction's snapshot is taken)
                            return await(t5Done, 0)
                                    .then(db.sql("SELECT COUNT(*) FROM " + data).map(row -> row.get(0)).one())
                                    .then(Mono.fromRunnable(t1Read::countDown))
                                    .then(await(t2Done, 0));
                        }))
                .then(insert(r, t33));
        CompletableFuture<String> t1 = CompletableFuture.supplyAsync(() -> {
            try {
                return outcome(transactions.transactional(store.fence(r, t33, body.flux())));
            } finally {
                t1Deadlocked.countDown();
                t1Read.countDown();
            }
        }, x -> new Thread(x).start());
        Mono<Void> heavyThenCross = Flux.range(0, 50)
                .concatMap(i -> db.sql("INSERT INTO " + heavy + " (v) SELECT seq FROM seq_1_to_100").then())
                .then(db.sql("UPDATE " + locks + " SET n = n + 1 WHERE id = 2").then())
                .then(Mono.fromRunnable(t3HasTwo::countDown))
                .then(db.sql("UPDATE " + locks + " SET n = n + 1 WHERE id = 1").then());
        CompletableFuture<String> t3 = CompletableFuture.supplyAsync(() -> {
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
        String t5 = outcome(transactions.transactional(store.fence(r, t35, insert(r, t35).flux())));
        t5Done.countDown();
        assertThat(t1Read.await(60, TimeUnit.SECONDS)).isTrue();
        String t2 = outcome(transactions.transactional(store.fence(r, t36, insert(r, t36).flux())));
        t2Done.countDown();
        String t1Out = t1.get(60, TimeUnit.SECONDS);
        String t3Out = t3.get(60, TimeUnit.SECONDS);
        List<Long> rows = db.sql("SELECT token FROM " + data + " WHERE k = ? ORDER BY id").bind(0, r)
                .map(row -> row.get(0, Long.class)).all().collectList().block(STEP);
        System.out.println("snapshot after deadlock: deadlock=" + deadlock[0]
                + " t1=" + t1Out + " t5=" + t5 + " t2=" + t2
                + " t3=" + t3Out + " rows=" + rows);
        assertThat(deadlock[0]).as("T1's body lost a deadlock").isNotNull().containsIgnoringCase("deadlock");
        assertThat(t5).isEqualTo("ok");
        assertThat(t2).isEqualTo("ok");
        assertThat(rows).as("tokens written, in commit order (T1: %s)", t1Out).containsExactly(10L, 35L, 36L);
        assertThat(t1Out).contains("R2dbcFenceTransientException")
                .contains("were lost: the row is at 36 (holder 'h36')");
    }
}
