package dev.fencing.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.issuer.Lease;
import dev.fencing.jdbc.JdbcTokenIssuer;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Eight threads of one application take the database lease, hold it for {@code holdMillis} (the fenced work), and
 * give it back, on PostgreSQL: all of them on one resource ({@code oneResource}, a lock every request takes), and,
 * as the baseline in the same run, each on a resource of its own ({@code ownResources}, no contention). Sample time,
 * so the JSON has each call's percentiles; a call's time includes its wait for the lease.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Threads(8)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 2, time = 5)
@Measurement(iterations = 3, time = 10)
public class JdbcIssuerContentionBenchmark {

    /** How long a holder keeps the lease: the work it fences. */
    @Param("5")
    public int holdMillis;

    private HikariDataSource pool;
    private String table;
    private JdbcTokenIssuer issuer;
    private final AtomicInteger threads = new AtomicInteger();

    /** Each thread's own resource, for the baseline. */
    @State(Scope.Thread)
    public static class Own {
        String resource;

        @Setup(Level.Trial)
        public void name(JdbcIssuerContentionBenchmark bench) {
            resource = "bench-own-" + bench.threads.incrementAndGet();
        }
    }

    @Setup(Level.Trial)
    public void start() {
        HikariConfig config = BenchDatabase.POSTGRESQL.poolConfig();
        config.setMaximumPoolSize(10);
        pool = new HikariDataSource(config);
        table = "bench_lease_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        issuer = JdbcTokenIssuer.builder(pool).table(table).createTableIfMissing(true)
                .leaseTime(Duration.ofSeconds(30)).build();
        issuer.verify();
    }

    @TearDown(Level.Trial)
    public void stop() {
        new JdbcTemplate(pool).execute("DROP TABLE IF EXISTS " + table);
        pool.close();
    }

    private long hold(String resource) throws InterruptedException {
        try (Lease lease = issuer.acquire(resource, Duration.ofSeconds(60))) {
            Thread.sleep(holdMillis);
            return lease.token().value();
        }
    }

    @Benchmark
    public long oneResource() throws InterruptedException {
        return hold("bench-shared");
    }

    @Benchmark
    public long ownResources(Own own) throws InterruptedException {
        return hold(own.resource);
    }
}
