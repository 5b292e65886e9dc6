package dev.fencing.benchmarks;

import dev.fencing.guard.FencePoint;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.reactive.InMemoryReactiveFenceStore;
import dev.fencing.reactive.ReactiveFenceGuard;
import dev.fencing.reactive.ReactiveFencing;
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
import org.openjdk.jmh.annotations.Warmup;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What the reactive fence adds to one subscribed {@code Mono} ({@link ReactiveFenceGuard} with the in-memory reactive
 * store and counters on, single thread, the token in the Reactor Context): {@code mode=mono} subscribes the same
 * {@code Mono}, with the same context written, unfenced (the baseline); {@code fenced} subscribes it through the
 * guard. Each operation assembles and subscribes anew, as a request does; everything completes on the calling thread.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
public class ReactiveFenceBenchmark {

    private static final Object[] NO_ARGS = new Object[0];

    @Param({"mono", "fenced"})
    public String mode;

    private ReactiveFenceGuard guard;
    private FencePoint point;
    private Function<Context, Context> token;
    private final Long value = 1L;
    private Supplier<Mono<Long>> body;

    @Setup(Level.Trial)
    public void setUp() {
        if (!mode.equals("mono") && !mode.equals("fenced")) {
            throw new IllegalArgumentException("Unknown mode '" + mode + "'");
        }
        guard = ReactiveFenceGuard.builder(new InMemoryReactiveFenceStore()).build();
        point = new FencePoint("Bench.write()", "bench", null, null, false,
                new FencingMetrics(new SimpleMeterRegistry()));
        token = ReactiveFencing.bind(new FencingToken("bench", 1, "lease"));
        body = () -> Mono.just(value);
    }

    @Benchmark
    public Long subscribe() {
        Mono<Long> mono = mode.equals("fenced") ? guard.fence(point, NO_ARGS, body).singleOrEmpty() : body.get();
        return mono.contextWrite(token).block();
    }
}
