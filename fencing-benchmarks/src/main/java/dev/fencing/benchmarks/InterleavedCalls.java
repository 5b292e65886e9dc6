package dev.fencing.benchmarks;

import dev.fencing.aspectj.FencingAspect;
import dev.fencing.benchmarks.woven.WovenTarget;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.FenceBracket;
import dev.fencing.guard.FenceGuard;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.spring.support.FencingSupport;
import dev.fencing.store.BracketFenceStore;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.aopalliance.intercept.MethodInterceptor;
import org.aspectj.lang.Aspects;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.ToDoubleFunction;

/**
 * The per-call ratios and differences of {@link FenceOverheadBenchmark}'s proxy and woven calls, measured so that a
 * slow window of the host falls on a call and its baseline alike: the calls run in blocks of a few milliseconds, one
 * block of each after the other in a rotating order, and each ratio is taken between the blocks of one turn. On a VM
 * whose speed changes from one second to the next, JMH's runs of one benchmark after another (seconds apart) cannot
 * tell a difference of a few nanoseconds; the median of a thousand turns can. Complements JMH, which stays the source
 * of allocation figures. Besides {@code FenceOverheadBenchmark}'s calls: the application's fencing interceptor on a
 * proxy built like the no-op one ({@code advised}), and the fenced method's own bracket run by a lambda interceptor
 * that found it once ({@code bracket}: the fence without its per-call lookup), and the keyed method for two entities
 * in turn ({@code keyedOther}: no call repeats the scope's last key, so the scope's memory never answers and the
 * token is found among the bound ones, by comparing numbers once the scope has read them), and the woven keyed method
 * ({@code wovenKeyed}), and the unkeyed and keyed methods each called in a scope of its own that binds its one
 * token, as a request binds it ({@code fencedNewScope}, {@code keyedNewScope}: every keyed call the first in its
 * scope), and the unkeyed method with the keyed one's two parameters, alone and in a new scope ({@code fencedTwo},
 * {@code fencedTwoNewScope}): the keyed calls' baselines with the same arguments, since the proxy's own work grows
 * with them (its argument array, the reflective call's unboxing).
 *
 * <p>{@code java -cp fencing-benchmarks/target/benchmarks.jar dev.fencing.benchmarks.InterleavedCalls [seconds]}
 */
public final class InterleavedCalls {

    private static final String[] NAMES = {"noop", "floor", "fenced", "keyed", "plain", "plainFloor", "woven",
        "advised", "bracket", "keyedOther", "wovenKeyed", "fencedNewScope", "keyedNewScope", "fencedTwo",
        "fencedTwoNewScope"};
    private static final int CALLS_PER_BLOCK = 20_000;
    private static final FencingToken WOVEN_KEYED = new FencingToken("bench-woven:7", 1, "lease");
    private static final FencingToken UNKEYED = new FencingToken("total", 1, "lease");
    private static final FencingToken KEYED = new FencingToken("bench:7", 1, "lease");

    private final Target noop;
    private final Target floor;
    private final Target fenced;
    private final WovenTarget woven = new WovenTarget();
    private final Primitives primitives;
    private Target advised;
    private Target bracketed;
    private long sink;
    private long value = 1;

    private InterleavedCalls(Target noop, Target floor, Target fenced, Primitives primitives) {
        this.noop = noop;
        this.floor = floor;
        this.fenced = fenced;
        this.primitives = primitives;
    }

    /** The floor's primitives around a plain call, as {@link FenceOverheadBenchmark#primitivesFloor}. */
    private record Primitives(ConcurrentHashMap<Object, Object> points, ConcurrentHashMap<String, Object> slots,
                              ThreadLocal<Object> threadLocal, ReentrantLock lock, Counter counter, Object self,
                              Target target) {
        long call(long value) {
            if (points.get(self) == null || threadLocal.get() == null || slots.get("bench") == null) {
                throw new IllegalStateException("not set up");
            }
            long result;
            lock.lock();
            try {
                result = target.plain(value);
            } finally {
                lock.unlock();
            }
            counter.increment();
            return result;
        }
    }

    public static void main(String[] args) throws NoSuchMethodException {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 40;
        ConcurrentHashMap<Object, Object> points = new ConcurrentHashMap<>();
        ConcurrentHashMap<String, Object> slots = new ConcurrentHashMap<>();
        ThreadLocal<Object> threadLocal = ThreadLocal.withInitial(Object::new);
        ReentrantLock lock = new ReentrantLock();
        Counter counter = Counter.builder("bench.floor").register(new SimpleMeterRegistry());
        Object self = new Object();
        points.put(self, Boolean.TRUE);
        slots.put("bench", Boolean.TRUE);
        Target noop = proxy(invocation -> invocation.proceed());
        // the same floor as FenceOverheadBenchmark's proxyPrimitivesFloor
        Target floor = proxy(invocation -> {
            if (points.get(self) == null || threadLocal.get() == null || slots.get("bench") == null) {
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
        Primitives primitives = new Primitives(points, slots, threadLocal, lock, counter, self, new Target());
        FencingSupport wovenSupport = new FencingSupport(new FenceGuard(new InMemoryFenceStore()),
                new FencingMetrics(new SimpleMeterRegistry()));
        Aspects.aspectOf(FencingAspect.class).configure(wovenSupport);
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(InMemoryFencing.class);
             FencingScope scope = FencingContext.bind(new FencingToken("total", 1, "lease"),
                     new FencingToken("bench:7", 1, "lease"), new FencingToken("total-woven", 1, "lease"),
                     new FencingToken("bench:8", 1, "lease"))) {
            InterleavedCalls calls = new InterleavedCalls(noop, floor, context.getBean(Target.class), primitives);
            // the application's own fencing interceptor on a proxy built like the no-op one's
            calls.advised = proxy((MethodInterceptor) context.getBean("dev.fencing.internalFencingAdvisor",
                    Advisor.class).getAdvice());
            // the same bracket the fenced method runs, found once, run by a lambda interceptor: no lookup per call
            FenceBracket bracket = context.getBean(FencingSupport.class)
                    .bracketFor(Target.class.getMethod("fenced", long.class), Target.class);
            calls.bracketed = proxy(invocation -> {
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
            calls.measure(seconds);
        } finally {
            Aspects.aspectOf(FencingAspect.class).detach(wovenSupport);
        }
    }

    private static Target proxy(MethodInterceptor interceptor) {
        ProxyFactory factory = new ProxyFactory(new Target());
        factory.setProxyTargetClass(true);
        factory.addAdvice(interceptor);
        return (Target) factory.getProxy();
    }

    private void measure(double seconds) {
        long warmUntil = System.nanoTime() + 10_000_000_000L;
        int turn = 0;
        while (System.nanoTime() < warmUntil) {
            block(turn++ % NAMES.length);
        }
        List<double[]> turns = new ArrayList<>();
        long until = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < until) {
            double[] perCall = new double[NAMES.length];
            int first = turns.size() % NAMES.length;
            for (int i = 0; i < NAMES.length; i++) {
                int variant = (first + i) % NAMES.length;
                perCall[variant] = block(variant);
            }
            turns.add(perCall);
        }
        System.out.printf(Locale.ROOT, "%d turns of %d calls per variant (sink %d)%n", turns.size(), CALLS_PER_BLOCK,
                sink);
        for (int v = 0; v < NAMES.length; v++) {
            int variant = v;
            System.out.printf(Locale.ROOT, "%-7s ns/call median %7.2f  q1 %7.2f  q3 %7.2f%n", NAMES[v],
                    quantile(turns, t -> t[variant], 0.5), quantile(turns, t -> t[variant], 0.25),
                    quantile(turns, t -> t[variant], 0.75));
        }
        ratio(turns, "fenced / noop", 2, 0);
        ratio(turns, "floor / noop", 1, 0);
        ratio(turns, "keyed / fenced", 3, 2);
        ratio(turns, "fenced - floor, ns", 2, 1, true);
        ratio(turns, "keyed - fenced, ns", 3, 2, true);
        ratio(turns, "keyedOther / fenced", 9, 2);
        ratio(turns, "keyedOther - fenced, ns", 9, 2, true);
        ratio(turns, "woven - plain, ns", 6, 4, true);
        ratio(turns, "wovenKeyed - plain, ns", 10, 4, true);
        ratio(turns, "wovenKeyed / woven", 10, 6);
        ratio(turns, "keyedNewScope / fencedNewScope", 12, 11);
        ratio(turns, "keyedNewScope - fencedNewScope, ns", 12, 11, true);
        ratio(turns, "fencedTwo - fenced, ns", 13, 2, true);
        ratio(turns, "keyed / fencedTwo", 3, 13);
        ratio(turns, "keyed - fencedTwo, ns", 3, 13, true);
        ratio(turns, "keyedOther / fencedTwo", 9, 13);
        ratio(turns, "keyedNewScope / fencedTwoNewScope", 12, 14);
        ratio(turns, "keyedNewScope - fencedTwoNewScope, ns", 12, 14, true);
        ratio(turns, "keyedNewScope - fencedTwoNewScope + fencedTwo, ÷ fencedTwo", 12, 14, 13);
        ratio(turns, "plainFloor - plain, ns", 5, 4, true);
        ratio(turns, "woven - plainFloor, ns", 6, 5, true);
        ratio(turns, "advised - floor, ns", 7, 1, true);
        ratio(turns, "fenced - advised, ns", 2, 7, true);
        ratio(turns, "bracket - floor, ns", 8, 1, true);
        ratio(turns, "fenced - bracket, ns", 2, 8, true);
    }

    private static void ratio(List<double[]> turns, String name, int a, int b) {
        ratio(turns, name, a, b, false);
    }

    private static void ratio(List<double[]> turns, String name, int a, int b, boolean difference) {
        ToDoubleFunction<double[]> f = difference ? t -> t[a] - t[b] : t -> t[a] / t[b];
        System.out.printf(Locale.ROOT, "%-20s median %7.3f  q1 %7.3f  q3 %7.3f%n", name, quantile(turns, f, 0.5),
                quantile(turns, f, 0.25), quantile(turns, f, 0.75));
    }

    /**
     * The first keyed call's cost, its scope's bind taken out: (a - b) + c over c, per turn, where a and b are the
     * keyed and unkeyed calls each in a new scope and c the unkeyed call alone.
     */
    private static void ratio(List<double[]> turns, String name, int a, int b, int c) {
        ToDoubleFunction<double[]> f = t -> (t[a] - t[b] + t[c]) / t[c];
        System.out.printf(Locale.ROOT, "%-20s median %7.3f  q1 %7.3f  q3 %7.3f%n", name, quantile(turns, f, 0.5),
                quantile(turns, f, 0.25), quantile(turns, f, 0.75));
    }

    private static double quantile(List<double[]> turns, ToDoubleFunction<double[]> f, double q) {
        double[] values = turns.stream().mapToDouble(f).toArray();
        Arrays.sort(values);
        return values[(int) Math.min(values.length - 1, Math.round(q * (values.length - 1)))];
    }

    /** One block of one variant's calls, in ns per call; each variant has its own loop (one type per call site). */
    private double block(int variant) {
        long start = System.nanoTime();
        long result = switch (variant) {
            case 0 -> noopLoop();
            case 1 -> floorLoop();
            case 2 -> fencedLoop();
            case 3 -> keyedLoop();
            case 4 -> plainLoop();
            case 5 -> plainFloorLoop();
            case 6 -> wovenLoop();
            case 7 -> advisedLoop();
            case 8 -> bracketLoop();
            case 9 -> keyedOtherLoop();
            case 10 -> wovenKeyedLoop();
            case 11 -> fencedNewScopeLoop();
            case 12 -> keyedNewScopeLoop();
            case 13 -> fencedTwoLoop();
            default -> fencedTwoNewScopeLoop();
        };
        long elapsed = System.nanoTime() - start;
        sink += result;
        return (double) elapsed / CALLS_PER_BLOCK;
    }

    /**
     * The woven keyed method ({@code WovenTarget.fencedWithKey}, two {@code long} parameters bound by the advice), its
     * token bound in a scope of its own for the block, so the other variants' scope stays as it was.
     */
    private long wovenKeyedLoop() {
        long sum = 0;
        try (FencingScope ignored = FencingContext.bind(WOVEN_KEYED)) {
            for (int i = 0; i < CALLS_PER_BLOCK; i++) {
                sum += woven.fencedWithKey(7, value);
            }
        }
        return sum;
    }

    private long noopLoop() {
        long sum = 0;
        for (int i = 0; i < CALLS_PER_BLOCK; i++) {
            sum += noop.plain(value);
        }
        return sum;
    }

    private long floorLoop() {
        long sum = 0;
        for (int i = 0; i < CALLS_PER_BLOCK; i++) {
            sum += floor.plain(value);
        }
        return sum;
    }

    private long fencedLoop() {
        long sum = 0;
        for (int i = 0; i < CALLS_PER_BLOCK; i++) {
            sum += fenced.fenced(value);
        }
        return sum;
    }

    /**
     * The keyed method for entities 7 and 8 in turn: each call's key differs from the last, so the scope's memory of
     * its last keyed lookup never answers and the token is found among the bound ones (a scope holding several
     * entities' tokens).
     */
    private long keyedOtherLoop() {
        long sum = 0;
        for (int i = 0; i < CALLS_PER_BLOCK; i++) {
            sum += fenced.fencedWithKey(7 + (i & 1), value);
        }
        return sum;
    }

    /**
     * A request's shape, unkeyed: each call in a scope of its own binding the method's one token, so every call is the
     * first in its scope; {@link #keyedNewScopeLoop} is the same with a key.
     */
    private long fencedNewScopeLoop() {
        long sum = 0;
        for (int i = 0; i < CALLS_PER_BLOCK; i++) {
            try (FencingScope ignored = FencingContext.bind(UNKEYED)) {
                sum += fenced.fenced(value);
            }
        }
        return sum;
    }

    /**
     * The keyed method, each call in a scope of its own binding its entity's token: the first keyed call in a scope.
     */
    private long keyedNewScopeLoop() {
        long sum = 0;
        for (int i = 0; i < CALLS_PER_BLOCK; i++) {
            try (FencingScope ignored = FencingContext.bind(KEYED)) {
                sum += fenced.fencedWithKey(7, value);
            }
        }
        return sum;
    }

    /** The unkeyed method with the keyed one's two parameters: {@code keyed}'s baseline with the same arguments. */
    private long fencedTwoLoop() {
        long sum = 0;
        for (int i = 0; i < CALLS_PER_BLOCK; i++) {
            sum += fenced.fencedTwo(7, value);
        }
        return sum;
    }

    /** {@link #fencedTwoLoop}, each call in a scope of its own: {@code keyedNewScope}'s same-argument baseline. */
    private long fencedTwoNewScopeLoop() {
        long sum = 0;
        for (int i = 0; i < CALLS_PER_BLOCK; i++) {
            try (FencingScope ignored = FencingContext.bind(UNKEYED)) {
                sum += fenced.fencedTwo(7, value);
            }
        }
        return sum;
    }

    private long keyedLoop() {
        long sum = 0;
        for (int i = 0; i < CALLS_PER_BLOCK; i++) {
            sum += fenced.fencedWithKey(7, value);
        }
        return sum;
    }

    private long plainLoop() {
        long sum = 0;
        for (int i = 0; i < CALLS_PER_BLOCK; i++) {
            sum += woven.plain(value);
        }
        return sum;
    }

    private long plainFloorLoop() {
        long sum = 0;
        for (int i = 0; i < CALLS_PER_BLOCK; i++) {
            sum += primitives.call(value);
        }
        return sum;
    }

    private long wovenLoop() {
        long sum = 0;
        for (int i = 0; i < CALLS_PER_BLOCK; i++) {
            sum += woven.fenced(value);
        }
        return sum;
    }

    private long advisedLoop() {
        long sum = 0;
        for (int i = 0; i < CALLS_PER_BLOCK; i++) {
            sum += advised.fenced(value);
        }
        return sum;
    }

    private long bracketLoop() {
        long sum = 0;
        for (int i = 0; i < CALLS_PER_BLOCK; i++) {
            sum += bracketed.fenced(value);
        }
        return sum;
    }
}
