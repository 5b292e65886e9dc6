package dev.fencing.jdbc;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.transaction.support.TransactionTemplate;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.fencing.jdbc.MariaDbDeadlock.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * On MariaDB a deadlock inside the fenced body rolls back the whole transaction (the fence row's lock and max_seen
 * with it) and the connection goes on in a new transaction; a body that retries the failed statement (a common
 * reaction to a deadlock) then wrote unfenced, and the stale write committed after a newer token's (a review found
 * it). The checks are run again before the commit ({@code HeldChecks}): 33's commit is refused as a conflict.
 */
@Timeout(90)
class MariaDbDeadlockInBodyTest extends MariaDbDeadlockFixture {

    MariaDbDeadlockInBodyTest() {
        super("dl", 6, null);
    }

    /** {@code token}'s fenced call, then (unless {@code null}) {@code newer}'s, which writes, in one transaction. */
    private void fenced(String r, FencingToken token, Runnable body, FencingToken newer) {
        new TransactionTemplate(tm).executeWithoutResult(s -> {
            FencedCalls.fence(store, r, token, body);
            if (newer != null) {
                FencedCalls.fence(store, r, newer, () -> insert(r, newer));
            }
        });
    }

    @Test
    @Timeout(90)
    void aDeadlockInsideTheBodyThatTheBodyRetriesDoesNotLetAStaleWriteCommitAfterANewerOne() throws Exception {
        assertThat(deadlockedThen(null)).contains("run again before the commit, was refused");
    }

    @Test
    @Timeout(90)
    void aNewerTokenCheckedAfterTheDeadlockDoesNotHideTheLostCheck() throws Exception {
        // after the deadlock the transaction checks 35, above T2's 34, for the same resource: the lost check of 33 is
        // run again first, and refused (a review of the R2DBC store found 35's check hiding it, here too)
        assertThat(deadlockedThen(35L)).contains("(tokens [33]), looked at again before the check of token "
                + "dl-35#35@h35, were lost: the row is at 34 (holder 'h34')");
    }

    @Test
    @Timeout(90)
    void aNewerTokenCheckedInsideTheBodyBeforeTheDeadlockDoesNotHideTheLostCheck() throws Exception {
        // 33's body checks 35 (no write) before it loses the deadlock, which undoes both checks; T2 commits 34, the
        // body writes under 33: the commit finds the row at neither token (35's check run again would pass over 34)
        assertThat(deadlockedThen(-35L)).contains("(tokens [33, 35]), looked at again before the commit, were lost: "
                + "the row is at 34 (holder 'h34')");
    }

    /**
     * T1 checks 33 and loses a deadlock in its body, which goes on and writes under 33 (and then, with {@code newer},
     * checks and writes that token for the resource in the same transaction; with a negative one, checks minus it
     * inside the body before the deadlock); T2 commits 34 meanwhile. Returns T1's failure, after asserting that only
     * 34's write committed.
     */
    private String deadlockedThen(Long newer) throws Exception {
        String r = "dl-" + newer;
        FencingToken seed = new FencingToken(r, 10, "seed");
        fenced(r, seed, () -> insert(r, seed));
        FencingToken t33 = new FencingToken(r, 33, "h33");
        FencingToken t34 = new FencingToken(r, 34, "h34");
        MariaDbDeadlock lost = new MariaDbDeadlock(jdbc, locks, heavy);
        CountDownLatch t1Deadlocked = new CountDownLatch(1);
        CountDownLatch t2Done = new CountDownLatch(1);
        String[] deadlock = new String[1];

        CompletableFuture<String> t1 = CompletableFuture.supplyAsync(() -> {
            try {
                fenced(r, t33, () -> {
                    if (newer != null && newer < 0) {
                        FencedCalls.fence(store, r, new FencingToken(r, -newer, "h" + -newer), () -> { });
                    }
                    deadlock[0] = lost.lose();
                    t1Deadlocked.countDown();
                    await(t2Done);
                    // the statement failed as a deadlock loser: the body carries on (a retry, say)
                    insert(r, t33);
                }, newer == null || newer < 0 ? null : new FencingToken(r, newer, "h" + newer));
                return "ok";
            } catch (RuntimeException e) {
                return e.getClass().getSimpleName() + ": " + e.getMessage();
            } finally {
                t1Deadlocked.countDown();
            }
        }, x -> new Thread(x).start());
        CompletableFuture<String> t3 = lost.heavier(tm);

        await(t1Deadlocked);
        String t2;
        try {
            fenced(r, t34, () -> insert(r, t34));
            t2 = "ok";
        } catch (RuntimeException e) {
            t2 = e.getClass().getSimpleName();
        }
        t2Done.countDown();
        String t1Out = t1.get(60, TimeUnit.SECONDS);
        String t3Out = t3.get(60, TimeUnit.SECONDS);
        List<Long> rows = jdbc.queryForList("SELECT token FROM " + data + " WHERE k = ? ORDER BY id", Long.class, r);
        Long maxSeen = jdbc.queryForObject("SELECT max_seen FROM " + fence + " WHERE resource = ?", Long.class, r);
        System.out.println("deadlock in body: deadlock=" + deadlock[0] + " t1(33)=" + t1Out + " t2(34)=" + t2
                + " t3=" + t3Out + " rows=" + rows + " max_seen=" + maxSeen);
        assertThat(deadlock[0]).as("the body's deadlock").isNotNull();
        assertThat(t1Out).as("33's transaction").startsWith("FenceConflictException");
        assertThat(rows).as("tokens written, in commit order").containsExactly(10L, 34L);
        return t1Out;
    }
}
