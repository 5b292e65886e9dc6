package dev.fencing.benchmarks;

import dev.fencing.rule.FenceRule;
import dev.fencing.store.sql.FenceSql;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.Statement;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The R2DBC store's check on PostgreSQL, bounded by its lock wait: the statements alone, over one R2DBC connection
 * (no pool, no Spring), inside a transaction begun before and rolled back after each call, outside the timed part
 * (a {@link Level#Invocation} set-up and tear-down), so that no commit is in the figures and the same token is
 * accepted every time. {@link #r2dbcTwoStatements} is this release's check: the query that swaps in the bound
 * ({@link FenceSql#swapInLockTimeoutSql}), then the check whose {@code RETURNING} puts the caller's back
 * ({@link FenceSql#restoringCheckSql}); {@link #r2dbcThreeStatements} the previous release's, frozen here: a query
 * that swaps in the bound ({@link FenceSql#swapLockTimeoutSql}), the check ({@link FenceSql#checkSql}), a query that
 * puts the caller's back. Each statement is a round trip of its own. Both on a keyed resource whose row holds max_seen
 * 1, presented token 2; each call asserts the row it got back. The table (the shipped schema under a random name) is
 * dropped at tear-down. Needs PostgreSQL at 127.0.0.1:5432 ({@link BenchDatabase}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Threads(1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 5)
@Measurement(iterations = 5, time = 10)
public class R2dbcCheckBenchmark {

    static final String RESOURCE = "bench:r2dbc";
    static final String HOLDER = "bench-holder";
    static final long PRESENTED = 2;
    static final String BOUND = "5000ms";

    private Connection connection;
    private String table;
    private String swapInSql;
    private String restoringCheckSql;
    private String checkSql;
    private String swapSql;
    private Object[] parameters;

    @Setup(Level.Trial)
    public void start() {
        BenchDatabase db = BenchDatabase.of("R2dbcCheckBenchmark", "postgresql");
        connection = Mono.from(ConnectionFactories.get("r2dbc:postgresql://" + db.user() + "@127.0.0.1:5432/test")
                .create()).block(Duration.ofSeconds(30));
        table = "bench_r2dbc_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        FenceSql sql = FenceSql.POSTGRESQL;
        run(connection.createStatement(sql.createTableSql(table)));
        run(connection.createStatement("INSERT INTO " + table + " (resource, max_seen, holder, updated_at) VALUES ('"
                + RESOURCE + "', 1, '" + HOLDER + "', CURRENT_TIMESTAMP)"));
        swapInSql = sql.swapInLockTimeoutSql(BOUND);
        restoringCheckSql = dollars(sql.restoringCheckSql(table, FenceRule.UNBOUNDED));
        checkSql = dollars(sql.checkSql(table, FenceRule.UNBOUNDED));
        swapSql = sql.swapLockTimeoutSql(BOUND);
        parameters = sql.checkParameters(RESOURCE, PRESENTED, HOLDER);
    }

    @Setup(Level.Invocation)
    public void begin() {
        Mono.from(connection.beginTransaction()).block(Duration.ofSeconds(30));
    }

    @TearDown(Level.Invocation)
    public void rollBack() {
        Mono.from(connection.rollbackTransaction()).block(Duration.ofSeconds(30));
    }

    @TearDown(Level.Trial)
    public void stop() {
        run(connection.createStatement("DROP TABLE IF EXISTS " + table));
        Mono.from(connection.close()).block(Duration.ofSeconds(30));
    }

    @Benchmark
    public long r2dbcTwoStatements() {
        run(connection.createStatement(swapInSql));
        return expect(check(restoringCheckSql));
    }

    @Benchmark
    public long r2dbcThreeStatements() {
        String previous = Flux.from(connection.createStatement(swapSql).execute())
                .flatMap(r -> r.map((row, meta) -> row.get(0, String.class))).blockLast(Duration.ofSeconds(30));
        long maxSeen = expect(check(checkSql));
        run(connection.createStatement(FenceSql.POSTGRESQL.setLockTimeoutSql(previous)));
        return maxSeen;
    }

    private Long check(String sql) {
        Statement statement = connection.createStatement(sql);
        for (int i = 0; i < parameters.length; i++) {
            if (parameters[i] == null) {
                statement.bindNull(i, String.class);
            } else {
                statement.bind(i, parameters[i]);
            }
        }
        return Flux.from(statement.execute()).flatMap(r -> r.map((row, meta) -> row.get(0, Long.class)))
                .blockLast(Duration.ofSeconds(30));
    }

    private static long expect(Long maxSeen) {
        if (maxSeen == null || maxSeen != PRESENTED) {
            throw new IllegalStateException("the check returned max_seen " + maxSeen + ", not " + PRESENTED);
        }
        return maxSeen;
    }

    private static void run(Statement statement) {
        Flux.from(statement.execute()).flatMap(r -> r.getRowsUpdated()).blockLast(Duration.ofSeconds(30));
    }

    /** PostgreSQL's native markers ($1, $2, ...) in place of {@code ?} (the statements hold no other '?'). */
    private static String dollars(String sql) {
        StringBuilder out = new StringBuilder(sql.length() + 8);
        int n = 0;
        for (char c : sql.toCharArray()) {
            if (c == '?') {
                out.append('$').append(++n);
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
