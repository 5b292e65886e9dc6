package dev.fencing.benchmarks;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Throughput of the in-memory fence as threads are added: {@code InMemoryFenceStore.fence} alone, and a keyed
 * {@code FenceGuard.invoke} (in-memory store, counters on a {@link SimpleMeterRegistry}, the token bound for the
 * trial), each with every thread on its own resource and with all threads on one resource; a bare
 * {@link ReentrantLock} run the same two ways is the ceiling, since the store's slot is one. JMH takes the thread
 * count from {@code -t}: run it once per count (1, 2, 4, 8; see docs/benchmarks-scale.draft.md), not with the
 * default of one thread only.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
public class FenceScaleBenchmark {

    /** The one resource every thread fences in the {@code ...OneResource} rows. */
    static final long SHARED_ACCOUNT = 0;

    final InMemoryFenceStore store = new InMemoryFenceStore();
    final ReentrantLock sharedLock = new ReentrantLock();
    final AtomicInteger threads = new AtomicInteger();
    final FencedCall<Long> constant = () -> 1L;
    FenceGuard guard;
    FencePoint point;

    @Setup(Level.Trial)
    public void setUp() {
        guard = new FenceGuard(store);
        // as an adapter resolves @Fenced(resource = "accounts", key = "#id") once: a keyed checking point
        point = new FencePoint("AccountRepository.save(long)", "accounts", args -> args[0], "#id", false,
                new FencingMetrics(new SimpleMeterRegistry()));
    }

    /** One benchmark thread: its own account, the shared one, a token for each bound for the trial, its own lock. */
    @State(Scope.Thread)
    public static class Caller {
        long ownAccount;
        String ownResource;
        FencingToken ownToken;
        Object[] ownArgs;
        FencingToken sharedToken;
        Object[] sharedArgs;
        final ReentrantLock ownLock = new ReentrantLock();
        FencingScope scope;

        @Setup(Level.Trial)
        public void bind(FenceScaleBenchmark bench) {
            ownAccount = 1 + bench.threads.getAndIncrement();
            ownResource = "accounts:" + ownAccount;
            ownToken = new FencingToken(ownResource, 1, "lease-" + ownAccount);
            ownArgs = new Object[]{ownAccount};
            // one lease's token, shared by all threads: each check is its holder's accepted re-check
            sharedToken = new FencingToken("accounts:" + SHARED_ACCOUNT, 1, "shared-lease");
            sharedArgs = new Object[]{SHARED_ACCOUNT};
            scope = FencingContext.bind(ownToken, sharedToken);
        }

        @TearDown(Level.Trial)
        public void unbind() {
            scope.close();
        }

        /** The fenced body: touches only this thread's state. */
        long work() {
            return ownAccount;
        }
    }

    @Benchmark
    public Long storeOwnResource(Caller caller) throws Throwable {
        return store.fence(caller.ownResource, caller.ownToken, constant);
    }

    @Benchmark
    public Long storeOneResource(Caller caller) throws Throwable {
        return store.fence(caller.sharedToken.resource(), caller.sharedToken, constant);
    }

    @Benchmark
    public Long guardOwnResource(Caller caller) throws Throwable {
        return guard.invoke(point, caller.ownArgs, caller, Caller::work);
    }

    @Benchmark
    public Long guardOneResource(Caller caller) throws Throwable {
        return guard.invoke(point, caller.sharedArgs, caller, Caller::work);
    }

    /** The ceiling of the store rows on own resources: an uncontended lock and unlock per call. */
    @Benchmark
    public long lockOwn(Caller caller) {
        caller.ownLock.lock();
        try {
            return caller.work();
        } finally {
            caller.ownLock.unlock();
        }
    }

    /** The ceiling of the store rows on one resource: every thread on one {@link ReentrantLock}, as on one slot. */
    @Benchmark
    public long lockShared(Caller caller) {
        sharedLock.lock();
        try {
            return caller.work();
        } finally {
            sharedLock.unlock();
        }
    }
}
