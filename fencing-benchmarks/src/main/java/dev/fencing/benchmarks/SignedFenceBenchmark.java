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
import org.openjdk.jmh.annotations.Param;
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
 * counters on, single thread, one token bound for the whole trial as a request's or a lease's token is). One
 * benchmark method, so every mode runs the same call site; {@code mode} picks the token and the guard: an unsigned
 * token without a verifier (the baseline), HMAC-SHA256 or Ed25519 tokens through a verifier with its per-instance
 * cache, and without it (every check verifies).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
public class SignedFenceBenchmark {

    private static final Object[] NO_ARGS = new Object[0];

    @Param({"unsigned", "hmac", "hmac-uncached", "ed25519", "ed25519-uncached"})
    public String mode;

    private FenceGuard guard;
    private FencePoint point;
    private FencingScope scope;
    private long value = 1;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        FencingToken token = new FencingToken("bench", 1, "lease");
        TokenVerifier verifier = null;
        boolean cached = !mode.endsWith("-uncached");
        if (mode.startsWith("hmac")) {
            byte[] secret = new byte[32];
            new SecureRandom().nextBytes(secret);
            verifier = new TokenVerifier(KeyRing.of(VerificationKey.hmac("k1", secret)), cached ? 1024 : 0);
            token = TokenSigner.hmac("k1", secret).sign(token);
        } else if (mode.startsWith("ed25519")) {
            KeyPair pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
            verifier = new TokenVerifier(KeyRing.of(VerificationKey.ed25519("k1", pair.getPublic())),
                    cached ? 1024 : 0);
            token = TokenSigner.ed25519("k1", pair.getPrivate()).sign(token);
        } else if (!mode.equals("unsigned")) {
            throw new IllegalArgumentException("Unknown mode '" + mode + "'");
        }
        guard = FenceGuard.builder(new InMemoryFenceStore()).verifier(verifier).build();
        point = new FencePoint("Bench.write()", "bench", null, null, false,
                new FencingMetrics(new SimpleMeterRegistry()));
        scope = FencingContext.bind(token); // the same instance is checked on every call
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        scope.close();
    }

    private static long write(SignedFenceBenchmark state) {
        return state.value;
    }

    @Benchmark
    public long check() throws Throwable {
        return guard.invoke(point, NO_ARGS, this, SignedFenceBenchmark::write);
    }
}
