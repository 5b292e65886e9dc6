package dev.fencing.benchmarks;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.FencePoint;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * The token lookup of a keyed fence, alone, single thread: the thread's token for {@code bench:42} found by building
 * that text and comparing it ({@link #builtText}, what a keyed call did before) against finding it by matching the
 * bound tokens' resources to the resource and the key without building anything ({@link #matched}); the unkeyed
 * lookup of {@code bench} is the baseline. The key is a {@code Long} or a {@code String} ({@link #key}), evaluated by
 * the point as a call would; the tokens of {@code bench:43} and, with {@link #others}, of two more keys are bound
 * beside it. A scope remembers its last keyed lookup, so {@link #matched} (the same key on every call, as a method
 * called again for one entity) is answered from that memory, and in {@link #matchedOtherKey} (two keys in turn) it
 * never answers: the scope's first lookup matches text, and from its second on it compares the numbers it read once
 * from its tokens. {@link #matchedInANewScope} binds a new scope of one token
 * around each lookup, as a request does, against {@link #unkeyedInANewScope}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class KeyedLookupBenchmark {

    @Param({"long", "string"})
    public String key;

    /** Whether the tokens of {@code bench:41} and {@code bench:420} are bound before {@code bench:42}. */
    @Param({"true", "false"})
    public boolean others;

    private final FencingMetrics metrics = new FencingMetrics(new SimpleMeterRegistry());
    private final FencePoint point = new FencePoint("Target.fenced(long)", "bench", args -> args[0], "#p0", false,
            metrics);
    private Object[] args;
    private Object[] otherArgs;
    private boolean turn;
    private FencingScope scope;
    private FencingToken fresh;

    @Setup(Level.Trial)
    public void setUp() {
        args = new Object[] {"long".equals(key) ? (Object) 42L : "42"};
        otherArgs = new Object[] {"long".equals(key) ? (Object) 43L : "43"};
        FencingToken bound = new FencingToken("bench:42", 1, "lease");
        FencingToken other = new FencingToken("bench:43", 1, "lease");
        fresh = bound;
        scope = others ? FencingContext.bind(new FencingToken("bench", 1, "lease"),
                new FencingToken("bench:41", 1, "lease"), new FencingToken("bench:420", 1, "lease"), bound, other)
                : FencingContext.bind(new FencingToken("bench", 1, "lease"), bound, other);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        scope.close();
    }

    @Benchmark
    public FencingToken unkeyed() {
        return FencingContext.current("bench");
    }

    @Benchmark
    public Object keyOnly() {
        return point.keyOf(args);
    }

    @Benchmark
    public String textOnly() {
        return point.resourceOf(point.keyOf(args));
    }

    @Benchmark
    public FencingToken builtText() {
        return FencingContext.current(point.resourceOf(point.keyOf(args)));
    }

    @Benchmark
    public FencingToken matched() {
        return point.present(point.keyOf(args));
    }

    @Benchmark
    public FencingToken matchedOtherKey() {
        turn = !turn;
        return point.present(point.keyOf(turn ? args : otherArgs));
    }

    /**
     * A request's shape: a new scope binding one token, one keyed lookup in it (the first call on an entity in its
     * scope), the scope closed; {@link #unkeyedInANewScope} is its baseline.
     */
    @Benchmark
    public FencingToken matchedInANewScope() {
        try (FencingScope ignored = FencingContext.bind(fresh)) {
            return point.present(point.keyOf(args));
        }
    }

    /** {@link #matchedInANewScope}'s baseline: the same scope and an unkeyed lookup of the token's own text. */
    @Benchmark
    public FencingToken unkeyedInANewScope() {
        try (FencingScope ignored = FencingContext.bind(fresh)) {
            return FencingContext.present("bench:42");
        }
    }
}
