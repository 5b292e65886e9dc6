package dev.fencing.context;

import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The token context, the in-memory store's slot lock and the guard on virtual threads (Java 21 and later; the module
 * is compiled for 17, so the virtual-thread API is reached reflectively and the tests are skipped on 17): a task on a
 * virtual thread checks its caller's token when propagated and is refused as missing when not, never another
 * request's; thousands of virtual threads on one slot neither hang nor let a stale token through, and the counters
 * are exact; nothing the library keeps grows with the number of (short-lived) threads.
 */
class VirtualThreadFencingTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);

    @AfterEach
    void nothingLeaks() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    /** A new virtual thread per task, or the test is skipped below Java 21. */
    static ExecutorService virtualThreadPerTask() {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need Java 21");
        try {
            return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private double checks(String resource, String outcome) {
        var c = registry.find("fencing.checks").tag("resource", resource).tag("outcome", outcome).counter();
        return c == null ? 0 : c.count();
    }

    private double checksOfAll(String outcome) {
        return registry.find("fencing.checks").tag("outcome", outcome).counters().stream()
                .mapToDouble(c -> c.count()).sum();
    }

    @Test
    @Timeout(60)
    void aTaskOnAVirtualThreadChecksItsCallersTokenOnlyWhenPropagated() throws Exception {
        ExecutorService virtual = virtualThreadPerTask();
        try {
            ExecutorService propagating = FencingPropagation.executorService(virtual);
            FenceGuard guard = new FenceGuard(new InMemoryFenceStore());
            FencePoint repo = new FencePoint("Repo.write()", "vt-accounts", null, null, false, metrics);
            FencingToken token = new FencingToken("vt-accounts", 5, "caller");
            try (FencingScope ignored = FencingContext.bind(token)) {
                Future<FencingToken> carried = propagating.submit(
                        () -> invoke(guard, repo, () -> FencingContext.current("vt-accounts")));
                assertThat(carried.get(10, TimeUnit.SECONDS)).isEqualTo(token);
                Future<Object> bare = virtual.submit(() -> invoke(guard, repo, () -> "ran"));
                assertThat(bare).failsWithin(Duration.ofSeconds(10)).withThrowableOfType(ExecutionException.class)
                        .havingCause().isInstanceOf(MissingTokenException.class);
                Future<FencingToken> viaTask = virtual.submit(FencingPropagation.callable(
                        () -> invoke(guard, repo, () -> FencingContext.current("vt-accounts"))));
                assertThat(viaTask.get(10, TimeUnit.SECONDS)).isEqualTo(token);
            }
            assertThat(checks("vt-accounts", "accepted")).isEqualTo(2);
            assertThat(checks("vt-accounts", "missing")).isEqualTo(1);
        } finally {
            closeAndWait(virtual);
        }
    }

    /**
     * A scope closed on another thread than the one that opened it is refused with a message naming both threads:
     * virtual threads have no name by default, and the message said "on the thread that opened it (), not on ".
     */
    @Test
    @Timeout(60)
    void aScopeClosedOnAnotherVirtualThreadIsRefusedNamingBothThreads() throws Exception {
        ExecutorService virtual = virtualThreadPerTask();
        try {
            FencingScope opened = virtual.submit(() -> FencingContext.bind(new FencingToken("vt-names", 1, "h")))
                    .get(10, TimeUnit.SECONDS);
            Future<Object> closed = virtual.submit(() -> {
                opened.close();
                return null;
            });
            assertThat(closed).failsWithin(Duration.ofSeconds(10)).withThrowableOfType(ExecutionException.class)
                    .havingCause().isInstanceOf(IllegalStateException.class)
                    .withMessageContaining("on the thread that opened it (VirtualThread[#")
                    .withMessageContaining("not on VirtualThread[#");
        } finally {
            closeAndWait(virtual);
        }
    }

    /**
     * Many requests at once, each on its own virtual thread, each acquiring a lease and handing its write to a
     * virtual-thread executor wrapped as the docs say: every write runs under its own request's token (never
     * another's, never none), in token order per resource, and the counters match.
     */
    @Test
    @Timeout(120)
    void concurrentRequestsOnVirtualThreadsEachWriteUnderTheirOwnToken() throws Exception {
        int requests = 4_000;
        int resources = 20;
        InMemoryFenceStore store = new InMemoryFenceStore();
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer(Duration.ofSeconds(60), 0);
        FenceGuard guard = new FenceGuard(store, issuer, Duration.ofSeconds(60));
        Map<String, List<Long>> applied = new ConcurrentHashMap<>();
        AtomicInteger wrongToken = new AtomicInteger();
        ExecutorService virtual = virtualThreadPerTask();
        try {
            ExecutorService propagating = FencingPropagation.executorService(virtual);
            List<Future<Object>> calls = new ArrayList<>();
            for (int i = 0; i < requests; i++) {
                String resource = "vt-many-" + (i % resources);
                FencePoint service = new FencePoint("Service.run()", resource, null, null, true, metrics);
                FencePoint repo = new FencePoint("Repo.write()", resource, null, null, false, metrics);
                calls.add(virtual.submit(() -> invoke(guard, service, () -> {
                    FencingToken mine = FencingContext.current(resource);
                    return propagating.submit(() -> invoke(guard, repo, () -> {
                        FencingToken seen = FencingContext.current(resource);
                        if (seen != mine) {
                            wrongToken.incrementAndGet();
                        }
                        LockSupport.parkNanos(20_000); // unmounts while the slot is held
                        applied.computeIfAbsent(resource, r -> new ArrayList<>()).add(seen.value());
                        return null;
                    })).get();
                })));
            }
            for (Future<Object> call : calls) {
                call.get(60, TimeUnit.SECONDS);
            }
        } finally {
            closeAndWait(virtual);
        }
        assertThat(wrongToken).hasValue(0);
        assertThat(applied).hasSize(resources);
        for (List<Long> values : applied.values()) {
            assertThat(values).hasSize(requests / resources).isSorted().doesNotHaveDuplicates();
        }
        assertThat(checksOfAll("accepted")).isEqualTo(requests);
        assertThat(checksOfAll("missing")).isZero();
    }

    /**
     * Thousands of virtual threads contend on one slot, each presenting a token drawn from one counter (so they
     * arrive out of order) and parking inside the write: no hang, every accepted write above the last one accepted
     * (no stale token through), each call counted once as accepted or rejected.
     */
    @Test
    @Timeout(120)
    void thousandsOfVirtualThreadsOnOneSlotNeitherHangNorLetAStaleTokenThrough() throws Exception {
        int threads = 10_000;
        InMemoryFenceStore store = new InMemoryFenceStore();
        FenceGuard guard = new FenceGuard(store);
        FencePoint repo = new FencePoint("Repo.write()", "vt-one", null, null, false, metrics);
        AtomicLong next = new AtomicLong();
        List<Long> accepted = new ArrayList<>(); // written under the slot's lock only
        AtomicInteger rejected = new AtomicInteger();
        long started = System.nanoTime();
        ExecutorService virtual = virtualThreadPerTask();
        try {
            for (int i = 0; i < threads; i++) {
                virtual.execute(() -> {
                    FencingToken token = new FencingToken("vt-one", next.incrementAndGet(), "h");
                    try (FencingScope ignored = FencingContext.bind(token)) {
                        guard.invoke(repo, new Object[0], () -> {
                            LockSupport.parkNanos(10_000);
                            return accepted.add(token.value());
                        });
                    } catch (TokenRejectedException e) {
                        rejected.incrementAndGet();
                    } catch (Throwable e) {
                        throw new AssertionError(e);
                    }
                });
            }
        } finally {
            closeAndWait(virtual);
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertThat(accepted).isSorted().doesNotHaveDuplicates();
        assertThat(accepted.size() + rejected.get()).isEqualTo(threads);
        assertThat(checks("vt-one", "accepted")).isEqualTo(accepted.size());
        assertThat(checks("vt-one", "stale")).isEqualTo(rejected.get());
        assertThat(store.maxSeen("vt-one").getAsLong()).isEqualTo(accepted.get(accepted.size() - 1));
        assertThat(millis).as("10,000 contended calls of ~10 us each").isLessThan(60_000);
    }

    /**
     * Many virtual threads queued on one resource's slot take about as long as on a {@code ReentrantLock} doing the
     * same (the same calls, the same write under it): measured on Java 25 with 20,000 virtual threads and a 10 us
     * write per accepted token, a {@code ReentrantLock} took about 1 s, the slot 9-37 s, with the median call waiting
     * nearly the whole run. The slot's waiters park for at most 8-64 ms and then give up their place
     * ({@code tryAcquireNanos} times out: the node is cancelled, which walks the whole queue, and the thread queues
     * again at the tail); with thousands of waiters that churn is quadratic and keeps the two carriers busy, so the
     * holder, parked inside its write, waits for a carrier too. A {@code ReentrantLock} whose waiters use the same
     * timed {@code tryLock} loop shows the same collapse (35-144 s), a plain {@code lock()} does not.
     */
    @Test
    @Timeout(300)
    void manyVirtualThreadsOnOneSlotWaitNoLongerThanOnAReentrantLock() throws Exception {
        int threads = 20_000;
        long baseline = Long.MAX_VALUE;
        long slot = Long.MAX_VALUE;
        for (int round = 0; round < 2; round++) { // the better of two, for each
            baseline = Math.min(baseline, oneResourceMillis(threads, null));
            slot = Math.min(slot, oneResourceMillis(threads, new InMemoryFenceStore()));
        }
        assertThat(slot).as("20,000 virtual threads on one slot, ms (on a ReentrantLock: %d ms)", baseline)
                .isLessThan(3 * baseline + 2_000);
    }

    /**
     * {@code threads} virtual threads, each presenting the next token of one counter for one resource, through
     * {@code store} or, when it is {@code null}, a {@code ReentrantLock} and the same comparison; milliseconds.
     */
    private static long oneResourceMillis(int threads, InMemoryFenceStore store) throws Exception {
        java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
        long[] maxSeen = {0};
        AtomicLong next = new AtomicLong();
        long started = System.nanoTime();
        ExecutorService virtual = virtualThreadPerTask();
        try {
            for (int i = 0; i < threads; i++) {
                virtual.execute(() -> {
                    FencingToken token = new FencingToken("vt-queue", next.incrementAndGet(), "h");
                    if (store != null) {
                        try {
                            store.fence("vt-queue", token, () -> {
                                LockSupport.parkNanos(10_000);
                                return null;
                            });
                        } catch (TokenRejectedException e) {
                            // stale: refused, as the baseline skips it
                        } catch (Throwable e) {
                            throw new AssertionError(e);
                        }
                        return;
                    }
                    lock.lock();
                    try {
                        if (token.value() > maxSeen[0]) {
                            maxSeen[0] = token.value();
                            LockSupport.parkNanos(10_000);
                        }
                    } finally {
                        lock.unlock();
                    }
                });
            }
        } finally {
            closeAndWait(virtual);
        }
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    }

    /**
     * 10^5 requests, each on a virtual thread of its own, each acquiring a lease and checking its token: nothing
     * the library keeps per thread or per acquisition outlives the call (open token uses, context, slots per
     * resource), and the heap retained afterwards does not grow with the number of threads.
     */
    @Test
    @Timeout(300)
    void aVirtualThreadPerRequestLeavesNothingBehind() throws Exception {
        InMemoryFenceStore store = new InMemoryFenceStore();
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer(Duration.ofSeconds(60), 0);
        FenceGuard guard = new FenceGuard(store, issuer, Duration.ofSeconds(60));
        int resources = 100;
        FencePoint[] services = new FencePoint[resources];
        FencePoint[] repos = new FencePoint[resources];
        for (int r = 0; r < resources; r++) {
            services[r] = new FencePoint("Service.run()", "vt-leak-" + r, null, null, true, metrics);
            repos[r] = new FencePoint("Repo.write()", "vt-leak-" + r, null, null, false, metrics);
        }
        runRequests(guard, services, repos, 10_000); // warm up: classes, JIT, counters, slots
        long before = retainedHeap();
        runRequests(guard, services, repos, 100_000);
        long after = retainedHeap();
        assertThat(openUses()).isEmpty();
        assertThat(store.size()).isEqualTo(resources);
        assertThat(checksOfAll("accepted")).isEqualTo(110_000);
        assertThat(after - before).as("heap retained after 10^5 virtual threads, bytes").isLessThan(4L << 20);
    }

    private static void runRequests(FenceGuard guard, FencePoint[] services, FencePoint[] repos, int n)
            throws Exception {
        AtomicInteger failed = new AtomicInteger();
        ExecutorService virtual = virtualThreadPerTask();
        try {
            for (int i = 0; i < n; i++) {
                int r = i % services.length;
                virtual.execute(() -> {
                    try {
                        guard.invoke(services[r], new Object[0],
                                () -> guard.invoke(repos[r], new Object[0], () -> null));
                    } catch (Throwable e) {
                        failed.incrementAndGet();
                    }
                });
            }
        } finally {
            closeAndWait(virtual);
        }
        assertThat(failed).hasValue(0);
    }

    /** {@link FenceGuard#invoke} for a {@code Callable}: what is not an {@code Exception} is rethrown as is. */
    static <T> T invoke(FenceGuard guard, FencePoint point, dev.fencing.store.FencedCall<T> call) throws Exception {
        try {
            return guard.invoke(point, new Object[0], call);
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new AssertionError(e);
        }
    }

    /** {@code ExecutorService.close()} of Java 19 and later, which this module (compiled for 17) cannot name. */
    static void closeAndWait(ExecutorService executor) throws InterruptedException {
        executor.shutdown();
        if (!executor.awaitTermination(100, TimeUnit.SECONDS)) {
            executor.shutdownNow();
            throw new AssertionError("tasks still running after 100 s: a hang");
        }
    }

    private static long retainedHeap() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(100);
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    @SuppressWarnings("unchecked")
    private static Map<FencingToken, TokenUse> openUses() throws ReflectiveOperationException {
        Field open = TokenUse.class.getDeclaredField("OPEN");
        open.setAccessible(true);
        return (Map<FencingToken, TokenUse>) open.get(null);
    }
}
