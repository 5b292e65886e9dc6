package dev.fencing.benchmarks;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.signing.KeyRing;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.VerificationKey;
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

import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.util.concurrent.TimeUnit;

/**
 * What verifying a signed token adds to one check through the fence ({@link FenceGuard} with the in-memory store and
 * counters on, single thread, the token bound for the whole trial as a request's or a lease's token is): an unsigned
 * token without a verifier (the baseline), then HMAC-SHA256 and Ed25519 tokens through a verifier with its
 * per-instance cache and without it (every check verifies).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
public class SignedFenceBenchmark {

    private static final Object[] NO_ARGS = new Object[0];

    private final FencingMetrics metrics = new FencingMetrics(new SimpleMeterRegistry());
    private FenceGuard unsignedGuard;
    private FenceGuard hmacGuard;
    private FenceGuard hmacUncachedGuard;
    private FenceGuard ed25519Guard;
    private FenceGuard ed25519UncachedGuard;
    private FencePoint unsignedPoint;
    private FencePoint hmacPoint;
    private FencePoint ed25519Point;
    private FencingScope scope;
    private long value = 1;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        KeyPair pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        KeyRing hmacRing = KeyRing.of(VerificationKey.hmac("k1", secret));
        KeyRing ed25519Ring = KeyRing.of(VerificationKey.ed25519("k2", pair.getPublic()));

        unsignedGuard = new FenceGuard(new InMemoryFenceStore());
        hmacGuard = FenceGuard.builder(new InMemoryFenceStore()).verifier(new TokenVerifier(hmacRing)).build();
        hmacUncachedGuard = FenceGuard.builder(new InMemoryFenceStore()).verifier(new TokenVerifier(hmacRing, 0))
                .build();
        ed25519Guard = FenceGuard.builder(new InMemoryFenceStore()).verifier(new TokenVerifier(ed25519Ring)).build();
        ed25519UncachedGuard = FenceGuard.builder(new InMemoryFenceStore())
                .verifier(new TokenVerifier(ed25519Ring, 0)).build();

        unsignedPoint = new FencePoint("Bench.unsigned()", "unsigned", null, null, false, metrics);
        hmacPoint = new FencePoint("Bench.hmac()", "hmac", null, null, false, metrics);
        ed25519Point = new FencePoint("Bench.ed25519()", "ed25519", null, null, false, metrics);

        // one lease's token per resource, bound for the whole trial; the same instance is checked on every call
        scope = FencingContext.bind(new FencingToken("unsigned", 1, "lease"),
                TokenSigner.hmac("k1", secret).sign(new FencingToken("hmac", 1, "lease")),
                TokenSigner.ed25519("k2", pair.getPrivate()).sign(new FencingToken("ed25519", 1, "lease")));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        scope.close();
    }

    private static long write(SignedFenceBenchmark state) {
        return state.value;
    }

    @Benchmark
    public long unsigned() throws Throwable {
        return unsignedGuard.invoke(unsignedPoint, NO_ARGS, this, SignedFenceBenchmark::write);
    }

    @Benchmark
    public long hmacCached() throws Throwable {
        return hmacGuard.invoke(hmacPoint, NO_ARGS, this, SignedFenceBenchmark::write);
    }

    @Benchmark
    public long hmacUncached() throws Throwable {
        return hmacUncachedGuard.invoke(hmacPoint, NO_ARGS, this, SignedFenceBenchmark::write);
    }

    @Benchmark
    public long ed25519Cached() throws Throwable {
        return ed25519Guard.invoke(ed25519Point, NO_ARGS, this, SignedFenceBenchmark::write);
    }

    @Benchmark
    public long ed25519Uncached() throws Throwable {
        return ed25519UncachedGuard.invoke(ed25519Point, NO_ARGS, this, SignedFenceBenchmark::write);
    }
}
