package dev.fencing.jdbc;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.fencing.jdbc.MariaDbDeadlock.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A transaction that checked 33 and 35 for one resource loses a deadlock in its body, which goes on, reads something
 * (its new transaction's snapshot is taken then, after a duplicate of 35 committed) and writes under 33 while 36
 * commits. The commit's look at the row must be a locking read: a review found the snapshot's 35 accepted as the
 * transaction's own, and 33's write committed after 36's.
 */
@Timeout(120)
class MariaDbSnapshotAfterDeadlockTest extends MariaDbDeadlockFixture {

    MariaDbSnapshotAfterDeadlockTest() {
        super("snapdl", 6, null);
    }

    @Test
    void theCommitsLookAtTheRowIsALockingRead() throws Exception {
        String r = "snap-" + System.nanoTime();
        FencingToken seed = new FencingToken(r, 10, "seed");
        fenced(r, seed, () -> insert(r, seed));
        FencingToken t33 = new FencingToken(r, 33, "h33");
        FencingToken t35 = new FencingToken(r, 35, "h35");
        FencingToken t36 = new FencingToken(r, 36, "h36");
        MariaDbDeadlock lost = new MariaDbDeadlock(jdbc, locks, heavy);
        CountDownLatch t1Deadlocked = new CountDownLatch(1);
        CountDownLatch t5Done = new CountDownLatch(1);
        CountDownLatch t1Read = new CountDownLatch(1);
        CountDownLatch t2Done = new CountDownLatch(1);
        String[] deadlock = new String[1];

        CompletableFuture<String> t1 = CompletableFuture.supplyAsync(() -> {
            try {
                fenced(r, t33, () -> {
                    FencedCalls.fence(store, r, t35, () -> { });
                    deadlock[0] = lost.lose();
                    if (deadlock[0] != null) {
                        t1Deadlocked.countDown();
                        await(t5Done);
                        // the body goes on: it reads something (its new transaction's snapshot is taken here)
                        jdbc.queryForObject("SELECT COUNT(*) FROM " + data, Long.class);
                        t1Read.countDown();
                        await(t2Done);
                    }
                    insert(r, t33);
                });
                return "ok";
            } catch (RuntimeException e) {
                return e.getClass().getSimpleName() + ": " + e.getMessage();
            } finally {
                t1Deadlocked.countDown();
                t1Read.countDown();
            }
        }, x -> new Thread(x).start());

        CompletableFuture<String> t3 = lost.heavier(tm);

        await(t1Deadlocked);
        // T5: the same token 35 of the same holder, in a transaction of its own (a duplicate delivery), commits
        fenced(r, t35, () -> insert(r, t35));
        t5Done.countDown();
        await(t1Read);
        // T2: the newer holder's 36 commits
        fenced(r, t36, () -> insert(r, t36));
        t2Done.countDown();
        String t1Out = t1.get(60, TimeUnit.SECONDS);
        String t3Out = t3.get(60, TimeUnit.SECONDS);
        List<Long> rows = jdbc.queryForList("SELECT token FROM " + data + " WHERE k = ? ORDER BY id", Long.class, r);
        Long maxSeen = jdbc.queryForObject("SELECT max_seen FROM " + fence + " WHERE resource = ?", Long.class, r);
        System.out.println("snapshot after deadlock: deadlock=" + deadlock[0] + " t1=" + t1Out + " t3=" + t3Out
                + " rows=" + rows + " max_seen=" + maxSeen);
        assertThat(deadlock[0]).as("the body's deadlock").isNotNull();
        assertThat(rows).as("tokens written, in commit order (T1: %s)", t1Out).containsExactly(10L, 35L, 36L);
        assertThat(t1Out).startsWith("FenceConflictException")
                .contains("were lost: the row is at 36 (holder 'h36')");
    }
}
