package dev.fencing.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The slot's lock, which serializes one resource's writes: mutual exclusion under contention, reentry, the holder
 * check, and that waiters park until the unlock wakes them, in the order they queued (the lock is given back by a
 * volatile store, which misses no waiter).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SlotLockTest {

    @Test
    void threadsContendingForOneSlotNeverHoldItTogether() throws Exception {
        InMemoryFenceStore.Slot slot = new InMemoryFenceStore.Slot();
        int threads = 8;
        int rounds = 20_000;
        AtomicBoolean inside = new AtomicBoolean();
        AtomicInteger overlaps = new AtomicInteger();
        long[] unguarded = new long[1]; // incremented under the lock only: a lost update shows a hole in it
        List<Thread> workers = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                await(start);
                for (int i = 0; i < rounds; i++) {
                    slot.lock();
                    try {
                        if (!inside.compareAndSet(false, true)) {
                            overlaps.incrementAndGet();
                        }
                        unguarded[0]++;
                        if (i % 1000 == 0) {
                            Thread.yield(); // holds it a while now and then, so that others queue and park
                        }
                        inside.set(false);
                    } finally {
                        slot.unlock();
                    }
                }
            });
            worker.setDaemon(true);
            worker.start();
            workers.add(worker);
        }
        start.countDown();
        for (Thread worker : workers) {
            worker.join();
        }
        assertThat(overlaps).hasValue(0);
        assertThat(unguarded[0]).isEqualTo((long) threads * rounds);
        assertThat(slot.free()).isTrue();
    }

    @Test
    void waitersParkUntilWokenAndAreServedInTheOrderTheyQueued() throws Exception {
        InMemoryFenceStore.Slot slot = new InMemoryFenceStore.Slot();
        slot.lock();
        List<Integer> served = new CopyOnWriteArrayList<>();
        List<Thread> waiters = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            int n = i;
            Thread waiter = new Thread(() -> {
                slot.lock();
                served.add(n);
                slot.unlock();
            });
            waiter.setDaemon(true);
            waiter.start();
            awaitParked(waiter); // queued behind the ones before it
            waiters.add(waiter);
        }
        Thread.sleep(100); // longer than any period a timed wait would have looked again after
        for (Thread waiter : waiters) {
            // a timed park (TIMED_WAITING) would leave the queue when it ran out and join it again at the tail
            assertThat(waiter.getState()).as("a waiter parks until the unlock wakes it")
                    .isEqualTo(Thread.State.WAITING);
        }
        slot.unlock();
        for (Thread waiter : waiters) {
            waiter.join(TimeUnit.SECONDS.toMillis(5));
        }
        assertThat(served).containsExactly(0, 1, 2, 3, 4);
        assertThat(slot.free()).isTrue();
    }

    @Test
    void aWaiterIsWokenByTheUnlockAndKeepsItsInterrupt() throws Exception {
        InMemoryFenceStore.Slot slot = new InMemoryFenceStore.Slot();
        slot.lock();
        AtomicBoolean interruptedAfter = new AtomicBoolean();
        AtomicBoolean acquired = new AtomicBoolean();
        Thread waiter = new Thread(() -> {
            slot.lock();
            acquired.set(true);
            interruptedAfter.set(Thread.currentThread().isInterrupted());
            slot.unlock();
        });
        waiter.setDaemon(true);
        waiter.start();
        awaitParked(waiter);
        waiter.interrupt();
        Thread.sleep(50);
        assertThat(acquired).as("an interrupt does not give the lock to a waiter").isFalse();
        slot.unlock();
        waiter.join(TimeUnit.SECONDS.toMillis(5));
        assertThat(acquired).isTrue();
        assertThat(interruptedAfter).as("the interrupt is kept for the caller").isTrue();
    }

    @Test
    void theHolderReentersAndOnlyTheHolderUnlocks() throws Exception {
        InMemoryFenceStore.Slot slot = new InMemoryFenceStore.Slot();
        slot.lock();
        slot.lock();
        assertThat(slot.tryLockFree()).as("held, by this thread too").isFalse();
        assertThat(slot).hasToString("InMemoryFenceStore.Slot[Locked by thread " + Thread.currentThread().getName()
                + ", reentered 1, max_seen none]");
        AtomicReference<Throwable> other = new AtomicReference<>();
        Thread stranger = new Thread(() -> {
            try {
                slot.exit();
            } catch (Throwable t) {
                other.set(t);
            }
        });
        stranger.start();
        stranger.join();
        assertThat(other.get()).isInstanceOf(IllegalMonitorStateException.class);
        slot.unlock();
        assertThat(slot.free()).as("one reentry still held").isFalse();
        slot.unlock();
        assertThat(slot.free()).isTrue();
        assertThat(slot).hasToString("InMemoryFenceStore.Slot[Unlocked, max_seen none]");
        assertThatThrownBy(slot::unlock).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(slot.tryLockFree()).isTrue();
        slot.exit();
        assertThat(slot.free()).isTrue();
    }

    private static void awaitParked(Thread waiter) throws InterruptedException {
        while (waiter.getState() != Thread.State.TIMED_WAITING && waiter.getState() != Thread.State.WAITING) {
            Thread.sleep(1);
        }
        Thread.sleep(20); // parked a while
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
