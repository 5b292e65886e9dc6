package dev.fencing.jdbc;

import dev.fencing.store.TransientFenceFailure;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.fencing.jdbc.MariaDbDeadlock.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A transaction that presented several tokens for one resource, after a deadlock its body caught: a duplicate of the
 * older token committing meanwhile must not leave max_seen below the newer token the transaction wrote under (a
 * review found 34 accepted after 35's write), and a lock wait of the look at the row is a retryable refusal.
 */
@Timeout(120)
class MariaDbSeveralTokensAfterDeadlockTest extends MariaDbDeadlockFixture {

    MariaDbSeveralTokensAfterDeadlockTest() {
        super("sevtok", 8, Duration.ofSeconds(1));
    }

    private List<Long> written(String r) {
        return jdbc.queryForList("SELECT token FROM " + data + " WHERE k = ? ORDER BY id", Long.class, r);
    }

    /**
     * T1 checks 33 then 35 and writes under 35; a deadlock its body caught rolled both checks back; a duplicate of 33
     * (the old holder's retry) commits; T1's write under 35 commits, the row being at 33 ("one of its tokens"); then
     * 34 is accepted and its write commits after 35's.
     */
    @Test
    void aDuplicateOfTheOlderTokenLetsTheNewerTokensWriteCommitWithMaxSeenBelowIt() throws Exception {
        String r = "sevtok-a-" + System.nanoTime();
        FencingToken seed = new FencingToken(r, 10, "seed");
        fenced(r, seed, () -> insert(r, seed));
        FencingToken t33 = new FencingToken(r, 33, "h33");
        FencingToken t34 = new FencingToken(r, 34, "h34");
        FencingToken t35 = new FencingToken(r, 35, "h35");
        MariaDbDeadlock lost = new MariaDbDeadlock(jdbc, locks, heavy);
        CountDownLatch t1Deadlocked = new CountDownLatch(1);
        CountDownLatch t6Done = new CountDownLatch(1);
        String[] deadlock = new String[1];
        CompletableFuture<String> t1 = CompletableFuture.supplyAsync(() -> {
            try {
                fenced(r, t33, () -> FencedCalls.fence(store, r, t35, () -> {
                    deadlock[0] = lost.lose();
                    t1Deadlocked.countDown();
                    await(t6Done);
                    insert(r, t35);
                }));
                return "ok";
            } catch (RuntimeException e) {
                return e.getClass().getSimpleName() + ": " + e.getMessage();
            } finally {
                t1Deadlocked.countDown();
            }
        }, x -> new Thread(x).start());
        CompletableFuture<String> t3 = lost.heavier(tm);
        await(t1Deadlocked);
        // T6: the old holder's 33 again (a retry), in a transaction of its own: the row is back at 10, accepted
        fenced(r, t33, () -> insert(r, t33));
        t6Done.countDown();
        String t1Out = t1.get(60, TimeUnit.SECONDS);
        t3.get(60, TimeUnit.SECONDS);
        Long maxSeenAfterT1 = jdbc.queryForObject("SELECT max_seen FROM " + fence + " WHERE resource = ?",
                Long.class, r);
        String t7Out;
        try {
            fenced(r, t34, () -> insert(r, t34));
            t7Out = "ok";
        } catch (RuntimeException e) {
            t7Out = e.getClass().getSimpleName() + ": " + e.getMessage();
        }
        List<Long> rows = written(r);
        System.out.println("duplicate of the older token: deadlock=" + deadlock[0]
                + " t1=" + t1Out + " maxSeenAfterT1=" + maxSeenAfterT1
                + " t7=" + t7Out + " rows=" + rows);
        assertThat(deadlock[0]).as("the body's deadlock").isNotNull();
        // the guarantee: a write checked with 34 never commits after one accepted with 35
        // the guarantee: a write checked with 34 never commits after one accepted with 35. T1's write under 35
        // commits after the duplicate's 33 (the row at one of its tokens), and max_seen ends at 35, refusing 34
        assertThat(t1Out).isEqualTo("ok");
        assertThat(maxSeenAfterT1).isEqualTo(35L);
        assertThat(t7Out).contains("StaleTokenException");
        assertThat(rows).containsExactly(10L, 33L, 35L);
    }

    /**
     * T1 checked 33, lost the deadlock; 36 holds the row (its body still running); T1 presents 35: the look at the
     * row waits the store's bound, and its timeout should be a retryable refusal (busy/conflict), as the check's is.
     */
    @Test
    void aLockTimeoutOfTheLookAtTheRowIsARetryableRefusal() throws Exception {
        String r = "sevtok-c-" + System.nanoTime();
        FencingToken seed = new FencingToken(r, 10, "seed");
        fenced(r, seed, () -> insert(r, seed));
        FencingToken t33 = new FencingToken(r, 33, "h33");
        FencingToken t35 = new FencingToken(r, 35, "h35");
        FencingToken t36 = new FencingToken(r, 36, "h36");
        MariaDbDeadlock lost = new MariaDbDeadlock(jdbc, locks, heavy);
        CountDownLatch t1Deadlocked = new CountDownLatch(1);
        CountDownLatch t2Holds = new CountDownLatch(1);
        CountDownLatch t1Tried = new CountDownLatch(1);
        Throwable[] inner = new Throwable[1];
        CompletableFuture<String> t1 = CompletableFuture.supplyAsync(() -> {
            try {
                fenced(r, t33, () -> {
                    lost.lose();
                    t1Deadlocked.countDown();
                    await(t2Holds);
                    try {
                        FencedCalls.fence(store, r, t35, () -> { });
                    } catch (RuntimeException e) {
                        inner[0] = e;
                        throw e;
                    } finally {
                        t1Tried.countDown();
                    }
                });
                return "ok";
            } catch (RuntimeException e) {
                return e.getClass().getSimpleName() + ": " + e.getMessage();
            } finally {
                t1Deadlocked.countDown();
                t1Tried.countDown();
            }
        }, x -> new Thread(x).start());
        CompletableFuture<String> t3 = lost.heavier(tm);
        await(t1Deadlocked);
        CompletableFuture<String> t2 = CompletableFuture.supplyAsync(() -> {
            try {
                fenced(r, t36, () -> {
                    t2Holds.countDown();
                    await(t1Tried);
                    insert(r, t36);
                });
                return "ok";
            } catch (RuntimeException e) {
                return e.getClass().getSimpleName();
            } finally {
                t2Holds.countDown();
            }
        }, x -> new Thread(x).start());
        String t1Out = t1.get(60, TimeUnit.SECONDS);
        t2.get(60, TimeUnit.SECONDS);
        t3.get(60, TimeUnit.SECONDS);
        System.out.println("lock wait of the look: t1=" + t1Out + " inner=" + inner[0] + " rows=" + written(r));
        assertThat(written(r)).containsExactly(10L, 36L);
        assertThat(inner[0]).as("the refusal of 35, after the look at the row timed out").isNotNull()
                .isInstanceOf(TransientFenceFailure.class);
    }
}
