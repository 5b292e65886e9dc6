package dev.fencing.store;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.management.LockInfo;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the JVM's own tools see of a slot's lock: a thread dump lists the slot among a holder's "locked ownable
 * synchronizers" and names its owner for a thread waiting on it, and ThreadMXBean.findDeadlockedThreads (jstack's
 * "Found one Java-level deadlock") finds two fenced calls that each wait for the other's resource. Both read the
 * synchronizer's exclusive owner thread (AbstractOwnableSynchronizer), which the slot must therefore keep.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class SlotLockDiagnosticsTest {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    @Test
    void aThreadDumpListsTheSlotAmongTheHoldersLockedSynchronizers() throws Exception {
        InMemoryFenceStore store = new InMemoryFenceStore();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            BracketFenceStore.Entry entry = store.enter("orders", new FencingToken("orders", 1, "h1"));
            try {
                entered.countDown();
                done.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                entry.exit();
            }
        }, "slot-holder");
        holder.setDaemon(true);
        holder.start();
        try {
            entered.await();
            ThreadInfo info = THREADS.getThreadInfo(new long[] {holder.getId()}, false, true)[0];
            assertThat(Arrays.stream(info.getLockedSynchronizers()).map(LockInfo::getClassName))
                    .as("locked ownable synchronizers of the holder")
                    .contains(InMemoryFenceStore.Slot.class.getName());
        } finally {
            done.countDown();
            holder.join(5_000);
        }
    }

    @Test
    void twoFencedCallsWaitingForEachOthersResourceAreFoundDeadlocked() throws Exception {
        InMemoryFenceStore store = new InMemoryFenceStore();
        CountDownLatch bothIn = new CountDownLatch(2);
        Thread ab = nested(store, "a", "b", bothIn, 1);
        Thread ba = nested(store, "b", "a", bothIn, 2);
        ab.start();
        ba.start();
        bothIn.await();
        long[] found = null;
        for (int i = 0; i < 100 && found == null; i++) { // deadlocked for good now (by design: lock order)
            Thread.sleep(20);
            found = THREADS.findDeadlockedThreads();
        }
        assertThat(found).as("ThreadMXBean.findDeadlockedThreads()").isNotNull();
        assertThat(Arrays.stream(found).boxed()).contains(ab.getId(), ba.getId());
        // the two daemon threads stay deadlocked until this test JVM exits
    }

    private static Thread nested(InMemoryFenceStore store, String first, String second, CountDownLatch bothIn,
                                 long value) {
        Thread t = new Thread(() -> {
            try {
                store.fence(first, new FencingToken(first, value, "h" + value), () -> {
                    bothIn.countDown();
                    bothIn.await();
                    return store.fence(second, new FencingToken(second, value + 10, "x" + value), () -> null);
                });
            } catch (Throwable e) {
                // not reached while deadlocked
            }
        }, "nested-" + first + second);
        t.setDaemon(true);
        return t;
    }
}
