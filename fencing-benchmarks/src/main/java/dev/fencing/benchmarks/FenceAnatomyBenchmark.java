package dev.fencing.benchmarks;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.FenceBracket;
import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.spring.EnableFencing;
import dev.fencing.spring.support.FencingSupport;
import dev.fencing.store.BracketFenceStore;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
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
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Where the time of one fenced call on a Spring proxy goes, measured rather than guessed: the same CGLIB proxy
 * (single thread, in-memory store, counters on a {@link SimpleMeterRegistry}, token bound for the trial) with a
 * no-op interceptor (the baseline), then interceptors that each add one part of the fence: the fence-point lookup,
 * the thread's token lookup, the store's check (lock, judge, unlock), the accepted counter, the guard with a
 * prebuilt point (everything but the lookup), and the whole {@code @Fenced} path through {@code @EnableFencing}.
 * Each part's cost is its figure minus the baseline. The primitives the parts are made of are measured alone too
 * (an uncontended CAS, a volatile store, a {@code ReentrantLock} lock/unlock, a {@code LongAdder} increment, a
 * Micrometer counter increment, a {@code ThreadLocal} read, a {@code ConcurrentHashMap} hit).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class FenceAnatomyBenchmark {

    private static final String RESOURCE = "total";

    private final FencingToken token = new FencingToken(RESOURCE, 1, "lease");
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final FenceGuard guard = new FenceGuard(store);
    private final FencingSupport support = new FencingSupport(guard, metrics);
    private final FencePoint point = new FencePoint("Target.fenced(long)", RESOURCE, null, null, false, metrics);
    private final Counter counter = Counter.builder("bench.counter").register(registry);
    private final LongAdder adder = new LongAdder();
    private final AtomicLong atomic = new AtomicLong();
    private final ReentrantLock lock = new ReentrantLock();
    private final ThreadLocal<Object> threadLocal = ThreadLocal.withInitial(Object::new);
    private final ConcurrentHashMap<String, Object> map = new ConcurrentHashMap<>();
    private volatile long volatileField;

    private Target baseline;
    private Target lookup;
    private Target context;
    private Target storeCheck;
    private Target counted;
    private Target guarded;
    private Target bracketed;
    private Target fenced;
    private Target floor;
    private AnnotationConfigApplicationContext spring;
    private FencingScope scope;
    private long value = 1;

    @Setup(Level.Trial)
    public void setUp() {
        baseline = proxy(invocation -> invocation.proceed());
        // the lookup of the fence point of an unfenced method: the cost every proxied call pays before it proceeds
        lookup = proxy(invocation -> support.invoke(invocation.getMethod(), Target.class, invocation,
                MethodInvocation::getArguments, MethodInvocation::proceed));
        context = proxy(invocation -> {
            if (FencingContext.current(RESOURCE) == null) {
                throw new IllegalStateException("no token bound");
            }
            return invocation.proceed();
        });
        storeCheck = proxy(invocation -> store.fence(RESOURCE, token, invocation::proceed));
        counted = proxy(invocation -> {
            counter.increment();
            return invocation.proceed();
        });
        guarded = proxy(invocation -> guard.invoke(point, invocation.getArguments(), invocation,
                MethodInvocation::proceed));
        // the same point and store as a bracket run around the interceptor's own proceed() (the proxy's path now)
        FenceBracket bracket = guard.bracket(point);
        bracketed = proxy(invocation -> {
            FencingToken presented = bracket.token(invocation.getArguments());
            BracketFenceStore.Entry entry = bracket.enter(presented);
            Object result;
            try {
                result = invocation.proceed();
            } catch (Throwable t) {
                throw bracket.failed(entry, presented, t);
            }
            bracket.exit(entry);
            return result;
        });
        // the floor: what any fence on a proxy must do, as bare primitives (no guard, store, rule or context classes)
        floor = proxy(invocation -> {
            Object result;
            if (map.get(RESOURCE) == null || threadLocal.get() == null || map.get(RESOURCE) == null) {
                throw new IllegalStateException("not set up");
            }
            lock.lock();
            try {
                result = invocation.proceed();
            } finally {
                lock.unlock();
            }
            counter.increment();
            return result;
        });
        spring = new AnnotationConfigApplicationContext(InMemoryFencing.class);
        fenced = spring.getBean(Target.class);
        map.put(RESOURCE, new Object());
        scope = FencingContext.bind(token);
    }

    private static Target proxy(MethodInterceptor interceptor) {
        ProxyFactory factory = new ProxyFactory(new Target());
        factory.setProxyTargetClass(true);
        factory.addAdvice(interceptor);
        return (Target) factory.getProxy();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        scope.close();
        spring.close();
    }

    /** The baseline: a CGLIB proxy with a no-op {@code MethodInterceptor}. */
    @Benchmark
    public long proxyNoOp() {
        return baseline.plain(value);
    }

    @Benchmark
    public long proxyPointLookup() {
        return lookup.plain(value);
    }

    @Benchmark
    public long proxyTokenLookup() {
        return context.plain(value);
    }

    @Benchmark
    public long proxyStoreCheck() {
        return storeCheck.plain(value);
    }

    @Benchmark
    public long proxyCounter() {
        return counted.plain(value);
    }

    @Benchmark
    public long proxyGuard() {
        return guarded.plain(value);
    }

    /** {@link #proxyGuard}'s point and store as a bracket: the guard's callback against the interceptor's own frame. */
    @Benchmark
    public long proxyBracket() {
        return bracketed.plain(value);
    }

    @Benchmark
    public long proxyFenced() {
        return fenced.fenced(value);
    }

    /**
     * The floor of any fence on a proxy: the no-op interceptor plus the primitives the fence cannot do without, in
     * sequence (a map hit for the method's point, a thread-local read for the token, a map hit for the resource's
     * lock, lock and unlock around the call, a counter increment), with none of the library's classes.
     */
    @Benchmark
    public long proxyPrimitivesFloor() {
        return floor.plain(value);
    }

    /** The same primitives in sequence without a proxy. */
    @Benchmark
    public long primitivesInSequence() {
        if (map.get(RESOURCE) == null || threadLocal.get() == null || map.get(RESOURCE) == null) {
            throw new IllegalStateException("not set up");
        }
        long result;
        lock.lock();
        try {
            result = value;
        } finally {
            lock.unlock();
        }
        counter.increment();
        return result;
    }

    @Benchmark
    public long primitiveCas() {
        long current = atomic.get();
        atomic.compareAndSet(current, current + value);
        return current;
    }

    @Benchmark
    public void primitiveVolatileStore() {
        volatileField = value;
    }

    @Benchmark
    public long primitiveLockUnlock() {
        lock.lock();
        try {
            return value;
        } finally {
            lock.unlock();
        }
    }

    @Benchmark
    public void primitiveLongAdder() {
        adder.increment();
    }

    @Benchmark
    public void primitiveMicrometerCounter() {
        counter.increment();
    }

    @Benchmark
    public Object primitiveThreadLocal() {
        return threadLocal.get();
    }

    @Benchmark
    public Object primitiveMapHit() {
        return map.get(RESOURCE);
    }
}
