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
 * A transaction that presented several tokens for one resource, after a deadlock its body caught: a duplicate of the
 * older token committing meanwhile must not leave max_seen below the newer token the transaction wrote under (a
 * review found 34 accepted after 35's write).
 */
@Timeout(120)
class R2dbcMariaDbSeveralTokensAfterDeadlockTest extends R2dbcMariaDbDeadlockFixture {

    R2dbcMariaDbSeveralTokensAfterDeadlockTest() {
        super("sevtok");
    }

    /**
     * T1 checks 33 then 35 and writes under 35 after a deadlock its body caught (which rolled both checks back); a
     * duplicate of 33 commits meanwhile; T1 commits (the row is at 33, "one of its tokens"), max_seen stays 33, and
     * 34 is then accepted: its write commits after 35's.
     */
    @Test
    void aDuplicateOfTheOlderTokenLetsTheNewerTokensWriteCommitWithMaxSeenBelowIt() throws Exception {
        String r = "sevtok-r-" + System.nanoTime();
        FencingToken seed = new FencingToken(r, 10, "seed");
        assertThat(outcome(transactions.transactional(store.fence(r, seed, insert(r, seed).flux())))).isEqualTo("ok");
        FencingToken t33 = new FencingToken(r, 33, "h33");
        FencingToken t34 = new FencingToken(r, 34, "h34");
        FencingToken t35 = new FencingToken(r, 35, "h35");
        CountDownLatch t1HasOne = new CountDownLatch(1);
        CountDownLatch t3HasTwo = new CountDownLatch(1);
        CountDownLatch t1Deadlocked = new CountDownLatch(1);
        CountDownLatch t6Done = new CountDownLatch(1);
        String[] deadlock = new String[1];

        Mono<Void> inner = db.sql("UPDATE " + locks + " SET n = n + 1 WHERE id = 1").then()
                .then(Mono.fromRunnable(t1HasOne::countDown))
                .then(await(t3HasTwo, 700))
                .then(db.sql("UPDATE " + locks + " SET n = n + 1 WHERE id = 2").then()
                        .onErrorResume(e -> {
                            deadlock[0] = e.getClass().getSimpleName() + ": " + e.getMessage();
                            t1Deadlocked.countDown();
                            return await(t6Done, 0);
                        }))
                .then(insert(r, t35));
        Mono<Void> body = store.fence(r, t35, inner.flux()).then();
        CompletableFuture<String> t1 = CompletableFuture.supplyAsync(() -> {
            try {
                return outcome(transactions.transactional(store.fence(r, t33, body.flux())));
            } finally {
                t1Deadlocked.countDown();
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
        // T6: the old holder's 33 again (a retry), in a transaction of its own: the row is back at 10, accepted
        String t6 = outcome(transactions.transactional(store.fence(r, t33, insert(r, t33).flux())));
        t6Done.countDown();
        String t1Out = t1.get(60, TimeUnit.SECONDS);
        String t3Out = t3.get(60, TimeUnit.SECONDS);
        Long maxSeenAfterT1 = db.sql("SELECT max_seen FROM " + fence + " WHERE resource = ?").bind(0, r)
                .map(row -> row.get(0, Long.class)).one().block(STEP);
        String t7 = outcome(transactions.transactional(store.fence(r, t34, insert(r, t34).flux())));
        List<Long> rows = db.sql("SELECT token FROM " + data + " WHERE k = ? ORDER BY id").bind(0, r)
                .map(row -> row.get(0, Long.class)).all().collectList().block(STEP);
        System.out.println("duplicate of the older token: deadlock=" + deadlock[0]
                + " t1=" + t1Out + " t6=" + t6 + " t3=" + t3Out
                + " maxSeenAfterT1=" + maxSeenAfterT1 + " t7=" + t7 + " rows=" + rows);
        assertThat(deadlock[0]).as("T1's body lost a deadlock").isNotNull().containsIgnoringCase("deadlock");
        // the guarantee: a write checked with 34 never commits after one accepted with 35. T1's write under 35
        // commits after the duplicate's 33 (the row at one of its tokens), and max_seen ends at 35, refusing 34
        assertThat(t1Out).isEqualTo("ok");
        assertThat(maxSeenAfterT1).isEqualTo(35L);
        assertThat(t7).contains("StaleTokenException");
        assertThat(rows).containsExactly(10L, 33L, 35L);
    }
}
