package dev.fencing.benchmarks;

import dev.fencing.issuer.Lease;
import dev.fencing.redisson.RedissonTokenIssuer;
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
import org.redisson.Redisson;
import org.redisson.api.RFencedLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Acquire + release of one uncontended lock on the local Redis (127.0.0.1:6379, {@code -Dbench.redis} to change it),
 * single thread: the Redisson issuer on a keyed resource ({@code accounts:42}: its family's floor is read beside the
 * lock request), on an unkeyed one (no family, no floor read), and Redisson's own {@code RFencedLock}
 * lock-and-get-token + unlock on the same client, in one run. Keys under a prefix of the run's own, deleted at the end.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 5)
@Measurement(iterations = 5, time = 10)
public class RedissonIssuerBenchmark {

    private RedissonClient client;
    private RedissonTokenIssuer issuer;
    private RFencedLock raw;
    private String prefix;

    @Setup(Level.Trial)
    public void start() {
        Config config = new Config();
        config.useSingleServer().setAddress(System.getProperty("bench.redis", "redis://127.0.0.1:6379"));
        client = Redisson.create(config);
        prefix = "fencing-bench:" + UUID.randomUUID() + ":";
        // the shared Redis here runs without append-only persistence: start anyway, as an outage you accept
        issuer = RedissonTokenIssuer.builder(client).prefix(prefix)
                .persistenceCheck(RedissonTokenIssuer.PersistenceCheck.WARN).build();
        issuer.raiseFamilyFloor("accounts", 1); // a floor exists: the keyed acquire reads one
        raw = client.getFencedLock(prefix + "raw");
    }

    @TearDown(Level.Trial)
    public void stop() {
        issuer.close();
        client.getKeys().deleteByPattern(prefix + "*");
        client.getKeys().deleteByPattern("redisson_lock_token:{" + prefix + "*");
        client.shutdown(0, 2, TimeUnit.SECONDS);
    }

    /** The issuer, a keyed resource: the lock request and the family floor's read, then the release. */
    @Benchmark
    public long issuerKeyed() {
        try (Lease lease = issuer.acquire("accounts:42", Duration.ofSeconds(5))) {
            return lease.token().value();
        }
    }

    /** The issuer, an unkeyed resource: no family, no floor read. */
    @Benchmark
    public long issuerUnkeyed() {
        try (Lease lease = issuer.acquire("ledger", Duration.ofSeconds(5))) {
            return lease.token().value();
        }
    }

    /** Redisson's fenced lock alone: lock and get the token, unlock. */
    @Benchmark
    public long rawFencedLock() throws InterruptedException {
        Long token = raw.tryLockAndGetToken(5, -1, TimeUnit.SECONDS);
        raw.unlock();
        return token;
    }
}
