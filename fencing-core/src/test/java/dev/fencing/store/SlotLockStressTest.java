package dev.fencing.store;

import dev.fencing.retention.IssuerFloors;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The in-memory store's slot lock under real contention, through the store's three ways in ({@code fence},
 * {@code lane(..).enter}, {@code enter}), with nested (reentrant) calls, exceptions in the body, interrupts flying, and
 * slots folded concurrently (a store at its {@code maxResources} bound, and {@code compact} in a loop). Checks: no two
 * threads inside one resource's body at once; no token accepted below one accepted before for the resource; the
 * store's max_seen never below what was accepted; every thread finishes (no lost wake-up left waiting for good); no
 * slot left held. Each scenario runs for a fixed time (about 3 s), so the class stays under 20 s.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class SlotLockStressTest {

    /** Each scenario's run; {@code -Dslotlock.stress.millis=..} for a longer one. */
    private static final long RUN_NANOS = TimeUnit.MILLISECONDS.toNanos(Long.getLong("slotlock.stress.millis", 3_000));
    /** {@code -Dslotlock.stress.workers=..} overrides each scenario's number of worker threads. */
    private static final int WORKERS = Integer.getInteger("slotlock.stress.workers", 0);

    @Test
    void boundedStoreFoldingUnderContentionKeepsExclusionAndTheFence() throws Exception {
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxResources(2, IssuerFloors.ONE_SEQUENCE).build();
        // nested calls with a newer token: a holder's same token again marks the slot touched, which the bound's
        // folding skips, so that no slot would be folded here
        Result r = run(store, new String[] {"fam:a", "fam:b", "fam:c", "fam:d"}, 6, false, true, false);
        r.assertHeld(store);
        assertThat(store.familyFloor("fam")).as("slots were folded while threads used them").isPresent();
    }

    @Test
    void compactionInALoopKeepsExclusionAndTheFence() throws Exception {
        InMemoryFenceStore store = new InMemoryFenceStore();
        Result r = run(store, new String[] {"fam:a", "fam:b", "other:c"}, 6, true, true, true);
        r.assertHeld(store);
        assertThat(r.folds.get() + r.replaced.get()).as("slots were folded while threads used them").isPositive();
    }

    @Test
    void oneHotResourceWithInterruptsNeverHoldsTwoAndNeverStalls() throws Exception {
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxResources(1, IssuerFloors.ONE_SEQUENCE).build();
        Result r = run(store, new String[] {"fam:hot"}, 8, true, true, true);
        r.assertHeld(store);
    }

    private static final class Result {
        final LongAdder accepted = new LongAdder();
        final LongAdder rejected = new LongAdder();
        final LongAdder full = new LongAdder();
        final AtomicLong overlaps = new AtomicLong();
        final AtomicLong staleAccepted = new AtomicLong();
        final AtomicLong maxSeenBehind = new AtomicLong();
        final AtomicLong folds = new AtomicLong();
        final AtomicLong replaced = new AtomicLong();
        final AtomicReference<Throwable> unexpected = new AtomicReference<>();
        String[] resources;

        void assertHeld(InMemoryFenceStore store) {
            assertThat(unexpected.get()).as("unexpected exception").isNull();
            assertThat(overlaps.get()).as("two threads inside one resource's body").isZero();
            assertThat(staleAccepted.get()).as("a token accepted below one accepted before").isZero();
            assertThat(maxSeenBehind.get()).as("max_seen read below a token already accepted").isZero();
            assertThat(accepted.sum()).as("the run made progress").isGreaterThan(1_000);
            store.slots().forEach((resource, slot) ->
                    assertThat(slot.free()).as("slot of %s left held", resource).isTrue());
            System.out.printf("stress %s: accepted=%d rejected=%d full=%d folds=%d replaced=%d%n",
                    Arrays.toString(resources), accepted.sum(), rejected.sum(), full.sum(), folds.get(),
                    replaced.get());
        }
    }

    private static Result run(InMemoryFenceStore store, String[] resources, int workers, boolean compactLoop,
                              boolean interrupts, boolean nestedSameToken) throws Exception {
        Result r = new Result();
        r.resources = resources;
        workers = WORKERS > 0 ? WORKERS : workers;
        int n = resources.length;
        AtomicReferenceArray<Thread> inside = new AtomicReferenceArray<>(n);
        AtomicLong[] maxAccepted = new AtomicLong[n];
        BracketFenceStore.Lane[] lanes = new BracketFenceStore.Lane[n];
        for (int i = 0; i < n; i++) {
            maxAccepted[i] = new AtomicLong();
            lanes[i] = store.lane(resources[i]);
        }
        AtomicLong sequence = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        long deadline = System.nanoTime() + RUN_NANOS;
        List<Thread> workerThreads = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            Thread t = new Thread(() -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                while (System.nanoTime() < deadline) {
                    Thread.interrupted(); // an interrupt sent meanwhile is not this iteration's business
                    int i = rnd.nextInt(n);
                    long value = sequence.incrementAndGet();
                    FencingToken token = new FencingToken(resources[i], value, "h" + value);
                    try {
                        enterAndRun(store, lanes[i], resources[i], token, rnd.nextInt(3), () ->
                                body(r, inside, maxAccepted, i, token, rnd, store, lanes[i],
                                        nestedSameToken ? null : sequence));
                    } catch (TokenRejectedException e) {
                        r.rejected.increment();
                    } catch (FenceStoreException e) {
                        r.full.increment(); // at the bound with every slot held: fails closed, fine
                    } catch (Boom e) {
                        // thrown by the body on purpose: the slot must be released all the same
                    } catch (Throwable e) {
                        r.unexpected.compareAndSet(null, e);
                    }
                }
            }, "stress-worker-" + w);
            t.setDaemon(true);
            workerThreads.add(t);
        }
        List<Thread> helpers = new ArrayList<>();
        if (compactLoop) {
            helpers.add(new Thread(() -> {
                while (!stop.get()) {
                    try {
                        r.folds.addAndGet(store.compact(Duration.ZERO, 1 + ThreadLocalRandom.current().nextInt(3),
                                IssuerFloors.ONE_SEQUENCE).folded());
                    } catch (Throwable e) {
                        r.unexpected.compareAndSet(null, e);
                    }
                    Thread.yield();
                }
            }, "stress-compactor"));
        }
        helpers.add(new Thread(() -> { // max_seen is never below a token accepted before the read began
            Object[] lastSlot = new Object[n];
            while (!stop.get()) {
                for (int i = 0; i < n; i++) {
                    long before = maxAccepted[i].get();
                    OptionalLong seen = store.maxSeen(resources[i]);
                    if (before > 0 && (seen.isEmpty() || seen.getAsLong() < before)) {
                        r.maxSeenBehind.incrementAndGet();
                    }
                }
                for (int i = 0; i < n; i++) {
                    Object slot = store.slots().get(resources[i]);
                    if (slot != null && lastSlot[i] != null && slot != lastSlot[i]) {
                        r.replaced.incrementAndGet(); // the resource's slot was folded and made again
                    }
                    if (slot != null) {
                        lastSlot[i] = slot;
                    }
                }
            }
        }, "stress-monitor"));
        if (interrupts) {
            helpers.add(new Thread(() -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                while (!stop.get()) {
                    workerThreads.get(rnd.nextInt(workerThreads.size())).interrupt();
                    LockSupport.parkNanos(rnd.nextLong(20_000, 200_000));
                }
            }, "stress-interrupter"));
        }
        for (Thread h : helpers) {
            h.setDaemon(true);
            h.start();
        }
        workerThreads.forEach(Thread::start);
        long joinBy = System.nanoTime() + RUN_NANOS + TimeUnit.SECONDS.toNanos(10);
        for (Thread t : workerThreads) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(joinBy - System.nanoTime())));
        }
        stop.set(true);
        for (Thread h : helpers) {
            h.join(TimeUnit.SECONDS.toMillis(5));
        }
        for (Thread t : workerThreads) {
            assertThat(t.isAlive()).as("%s still running 10 s after the run ended (a lost wake-up?): %s",
                    t.getName(), Arrays.toString(t.getStackTrace())).isFalse();
        }
        return r;
    }

    private interface Body {
        void run() throws Throwable;
    }

    private static final class Boom extends RuntimeException {
        Boom() {
            super("thrown by the fenced body", null, false, false);
        }
    }

    private static void enterAndRun(InMemoryFenceStore store, BracketFenceStore.Lane lane, String resource,
                                    FencingToken token, int way, Body body) throws Throwable {
        switch (way) {
            case 0 -> store.fence(resource, token, () -> {
                body.run();
                return null;
            });
            case 1 -> {
                BracketFenceStore.Entry entry = lane.enter(token);
                try {
                    body.run();
                } finally {
                    entry.exit();
                }
            }
            default -> {
                BracketFenceStore.Entry entry = store.enter(resource, token);
                try {
                    body.run();
                } finally {
                    entry.exit();
                }
            }
        }
    }

    private static void body(Result r, AtomicReferenceArray<Thread> inside, AtomicLong[] maxAccepted, int i,
                             FencingToken token, ThreadLocalRandom rnd, InMemoryFenceStore store,
                             BracketFenceStore.Lane lane, AtomicLong newer) throws Throwable {
        Thread me = Thread.currentThread();
        boolean outer = inside.compareAndSet(i, null, me);
        if (!outer && inside.get(i) != me) {
            r.overlaps.incrementAndGet();
        }
        try {
            r.accepted.increment();
            long previous = maxAccepted[i].getAndAccumulate(token.value(), Math::max);
            if (previous > token.value()) {
                r.staleAccepted.incrementAndGet();
            }
            int roll = rnd.nextInt(32);
            if (roll < 4 && outer) { // nested: the same resource again, the same or a newer token, any way in
                long v = newer == null ? token.value() : newer.incrementAndGet();
                FencingToken again = newer == null ? token : new FencingToken(token.resource(), v, "h" + v);
                enterAndRun(store, lane, token.resource(), again, rnd.nextInt(3), () -> {
                    if (inside.get(i) != me) {
                        r.overlaps.incrementAndGet();
                    }
                    if (maxAccepted[i].getAndAccumulate(again.value(), Math::max) > again.value()) {
                        r.staleAccepted.incrementAndGet();
                    }
                    if (rnd.nextInt(4) == 0) {
                        throw new Boom();
                    }
                });
            } else if (roll < 6) {
                LockSupport.parkNanos(rnd.nextLong(10_000, 100_000)); // held a while: others queue and park
            } else if (roll < 8) {
                Thread.yield();
            }
            if (inside.get(i) != me) {
                r.overlaps.incrementAndGet();
            }
            if (rnd.nextInt(16) == 0) {
                throw new Boom();
            }
        } finally {
            if (outer) {
                inside.compareAndSet(i, me, null);
            }
        }
    }
}
