package dev.fencing.benchmarks;

import dev.fencing.aspectj.FencingAspect;
import dev.fencing.spring.support.FencingSupport;
import dev.fencing.benchmarks.woven.WovenTarget;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.FenceGuard;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.aop.CountedAspect;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.aopalliance.intercept.MethodInterceptor;
import org.aspectj.lang.Aspects;
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
import org.springframework.aop.aspectj.annotation.AspectJProxyFactory;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What one call costs, single thread, against its baselines in the same run: a plain call, an AtomicLong CAS, the
 * in-memory store's check alone, a CGLIB proxy with a no-op MethodInterceptor, a no-op {@code @Aspect}, Micrometer's
 * {@code @Counted}, and {@code @Fenced} through {@code @EnableFencing} (without a key, with a key that is one
 * argument, one that is an argument's getter, one SpEL evaluates, compiled or interpreted) and woven at compile
 * time. Run with {@code -prof gc} for bytes allocated per call.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
public class FenceOverheadBenchmark {

    private final Target plainTarget = new Target();
    private final AtomicLong atomic = new AtomicLong();
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final FencingToken storeToken = new FencingToken("store", 1, "bench");
    private final FencedCall<Long> constant = () -> 1L;
    private final WovenTarget woven = new WovenTarget();
    private Target interceptorProxy;
    private Target aspectProxy;
    private Target countedProxy;
    private Target fencedProxy;
    private Target floorProxy;
    private AnnotationConfigApplicationContext context;
    private FencingScope scope;
    private final FencingToken unkeyedToken = new FencingToken("total", 1, "lease");
    private final FencingToken keyedToken = new FencingToken("bench:7", 1, "lease");
    private FencingSupport wovenSupport;
    private long value = 1;
    private long largeId = 4_000_000_123L;
    private final BenchOrder order = new BenchOrder("7");
    private final HiddenOrder hiddenOrder = new HiddenOrder("7");
    private final ConcurrentHashMap<Object, Object> points = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Object> slots = new ConcurrentHashMap<>();
    private final ThreadLocal<Object> threadLocal = ThreadLocal.withInitial(Object::new);
    private final ReentrantLock lock = new ReentrantLock();
    private final Counter counter = Counter.builder("bench.floor").register(new SimpleMeterRegistry());

    @Setup(Level.Trial)
    public void setUp() {
        ProxyFactory interceptor = new ProxyFactory(new Target());
        interceptor.setProxyTargetClass(true);
        interceptor.addAdvice((MethodInterceptor) invocation -> invocation.proceed());
        interceptorProxy = (Target) interceptor.getProxy();

        ProxyFactory floor = new ProxyFactory(new Target());
        floor.setProxyTargetClass(true);
        floor.addAdvice((MethodInterceptor) invocation -> {
            if (points.get(this) == null || threadLocal.get() == null || slots.get("bench") == null) {
                throw new IllegalStateException("not set up");
            }
            Object result;
            lock.lock();
            try {
                result = invocation.proceed();
            } finally {
                lock.unlock();
            }
            counter.increment();
            return result;
        });
        floorProxy = (Target) floor.getProxy();

        AspectJProxyFactory aspect = new AspectJProxyFactory(new Target());
        aspect.setProxyTargetClass(true);
        aspect.addAspect(new NoOpAspect());
        aspectProxy = aspect.getProxy();

        AspectJProxyFactory counted = new AspectJProxyFactory(new Target());
        counted.setProxyTargetClass(true);
        counted.addAspect(new CountedAspect(new SimpleMeterRegistry()));
        countedProxy = counted.getProxy();

        context = new AnnotationConfigApplicationContext(InMemoryFencing.class);
        fencedProxy = context.getBean(Target.class);

        wovenSupport = new FencingSupport(new FenceGuard(new InMemoryFenceStore()),
                new FencingMetrics(new SimpleMeterRegistry()));
        Aspects.aspectOf(FencingAspect.class).configure(wovenSupport);

        points.put(this, Boolean.TRUE);
        slots.put("bench", Boolean.TRUE);
        // one lease's token for each fenced resource, bound for the whole trial (as a caller's scope would be)
        scope = FencingContext.bind(new FencingToken("total", 1, "lease"), new FencingToken("bench:7", 1, "lease"),
                new FencingToken("total-woven", 1, "lease"), new FencingToken("bench-woven:7", 1, "lease"),
                new FencingToken("bench-woven:4000000123", 1, "lease"),
                new FencingToken("bench-woven:all", 1, "lease"));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        scope.close();
        Aspects.aspectOf(FencingAspect.class).detach(wovenSupport);
        context.close();
    }

    @Benchmark
    public long plainCall() {
        return plainTarget.plain(value);
    }

    @Benchmark
    public long atomicLongCas() {
        long current = atomic.get();
        atomic.compareAndSet(current, current + value);
        return current;
    }

    @Benchmark
    public Long inMemoryStoreCheck() throws Throwable {
        return store.fence("store", storeToken, constant);
    }

    @Benchmark
    public long proxyNoOpMethodInterceptor() {
        return interceptorProxy.plain(value);
    }

    /** The floor of any fence on a proxy: the no-op interceptor plus the primitives of {@link #primitivesFloor}. */
    @Benchmark
    public long proxyPrimitivesFloor() {
        return floorProxy.plain(value);
    }

    @Benchmark
    public long proxyNoOpAspect() {
        return aspectProxy.plain(value);
    }

    @Benchmark
    public long proxyCountedAspect() {
        return countedProxy.counted(value);
    }

    @Benchmark
    public long proxyFenced() {
        return fencedProxy.fenced(value);
    }

    @Benchmark
    public long proxyFencedWithSpelKey() {
        return fencedProxy.fencedWithKey(7, value);
    }

    /**
     * A request's shape, unkeyed: the call in a scope of its own that binds the method's one token (a prebuilt
     * instance, as {@code InterleavedCalls} binds), so the token is found in a scope with nothing remembered.
     */
    @Benchmark
    public long proxyFencedInANewScope() {
        try (FencingScope ignored = FencingContext.bind(unkeyedToken)) {
            return fencedProxy.fenced(value);
        }
    }

    /** {@link #proxyFenced} with the keyed method's two parameters and no key: the key's baseline. */
    @Benchmark
    public long proxyFencedTwo() {
        return fencedProxy.fencedTwo(7, value);
    }

    /** {@link #proxyFencedTwo} in a scope of its own: {@link #proxyFencedWithSpelKeyInANewScope}'s baseline. */
    @Benchmark
    public long proxyFencedTwoInANewScope() {
        try (FencingScope ignored = FencingContext.bind(unkeyedToken)) {
            return fencedProxy.fencedTwo(7, value);
        }
    }

    /** {@link #proxyFencedInANewScope} with a key: every keyed call the first in its scope. */
    @Benchmark
    public long proxyFencedWithSpelKeyInANewScope() {
        try (FencingScope ignored = FencingContext.bind(keyedToken)) {
            return fencedProxy.fencedWithKey(7, value);
        }
    }

    /**
     * The floor of any fence around a plain call: the primitives it cannot do without, in sequence (a map hit for
     * the method's point, a thread-local read for the token, a map hit for the resource's lock, lock and unlock
     * around the call, a counter increment), with none of the library's classes. The woven fence's cost is read
     * against it.
     */
    @Benchmark
    public long primitivesFloor() {
        if (points.get(this) == null || threadLocal.get() == null || slots.get("bench") == null) {
            throw new IllegalStateException("not set up");
        }
        long result;
        lock.lock();
        try {
            result = plainTarget.plain(value);
        } finally {
            lock.unlock();
        }
        counter.increment();
        return result;
    }

    /** A key that is an argument's getter ({@code #order.account}): read through a method handle. */
    @Benchmark
    public long proxyFencedWithPropertyKey() {
        return fencedProxy.fencedWithPropertyKey(order, value);
    }

    /** A key SpEL evaluates ({@code #order.account.toString()}, on a public type), compiled once warm. */
    @Benchmark
    public long proxyFencedWithEvaluatedKey() {
        return fencedProxy.fencedWithEvaluatedKey(order, value);
    }

    /** The same key on a package-private argument type, which SpEL cannot compile. */
    @Benchmark
    public long proxyFencedWithInterpretedKey() {
        return fencedProxy.fencedWithInterpretedKey(hiddenOrder, value);
    }

    @Benchmark
    public long wovenPlainCall() {
        return woven.plain(value);
    }

    @Benchmark
    public long wovenFenced() {
        return woven.fenced(value);
    }

    @Benchmark
    public long wovenFencedWithSpelKey() {
        return woven.fencedWithKey(7, value);
    }

    /** The same keyed call with an id and a value outside the small {@code Long} cache, as real ids are. */
    @Benchmark
    public long wovenFencedWithLargeKey() {
        return woven.fencedWithKey(largeId, largeId);
    }

    /** A keyed method of no parameter: its key (a constant) over no arguments, with no join point. */
    @Benchmark
    public long wovenFencedWithConstantKey() {
        return woven.fencedWithConstantKey();
    }

    /** A plain woven call of four parameters: the baseline of {@link #wovenFencedWithFourArguments}. */
    @Benchmark
    public String wovenPlainFour() {
        return woven.plainFour(7, value, "note", this);
    }

    /** A keyed woven method of four parameters and an object result: its arguments bound, no join point. */
    @Benchmark
    public String wovenFencedWithFourArguments() {
        return woven.fencedWithFourArguments(7, value, "note", this);
    }

    /** The same returning a {@code long} outside the {@code Long} cache (boxed by the advice until 682027a). */
    @Benchmark
    public long wovenFencedWithFourArgumentsReturningLong() {
        return woven.fencedWithFourArgumentsReturningLong(7, value, "note", this);
    }

    /** A plain woven call of seven parameters: the baseline of {@link #wovenFencedWithSevenArguments}. */
    @Benchmark
    public String wovenPlainSeven() {
        return woven.plainSeven(7, value, "note", this, 1, 2, 3);
    }

    /** A keyed woven method of seven parameters, the key the first of them. */
    @Benchmark
    public String wovenFencedWithSevenArguments() {
        return woven.fencedWithSevenArguments(7, value, "note", this, 1, 2, 3);
    }

    /**
     * The same with its two {@code long} arguments above the {@code Long} cache: each is boxed, the second twice (the
     * advice binds the first six and the last six), unless C2 removes the boxes.
     */
    @Benchmark
    public String wovenFencedWithSevenLargeArguments() {
        return woven.fencedWithSevenArguments(largeId, largeId, "note", this, 1, 2, 3);
    }

    /** {@link #wovenFencedWithSevenArguments} returning a {@code long} outside the {@code Long} cache. */
    @Benchmark
    public long wovenFencedWithSevenArgumentsReturningLong() {
        return woven.fencedWithSevenArgumentsReturningLong(7, value, "note", this, 1, 2, 3);
    }
}
