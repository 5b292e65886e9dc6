package dev.fencing.benchmarks;

import dev.fencing.r2dbc.R2dbcDialect;
import dev.fencing.r2dbc.R2dbcFenceStore;
import dev.fencing.store.sql.FenceSql;
import dev.fencing.token.FencingToken;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.spi.ConnectionFactories;
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
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Fenced against unfenced reactive transactions through the R2DBC store on PostgreSQL and on MariaDB (the
 * {@link #database} parameter): a {@code TransactionalOperator} of an {@code R2dbcTransactionManager} around a
 * single-row insert, the fenced one inside {@link R2dbcFenceStore#fence}; 4 client threads, each blocking on its own
 * transactions and fencing its own resource with one lease's token (whose row exists before the measurement), over an
 * r2dbc-pool of 8 connections. Measured: committed transactions per second. Every trial creates its tables under a
 * random suffix and drops them at tear-down.
 *
 * <p>Needs PostgreSQL on 127.0.0.1:5432, database {@code test}, user {@code postgres}, and MariaDB on 127.0.0.1:3306,
 * database {@code test}, user {@code root} without a password (override the URLs with {@code -Dbench.r2dbc.postgresql}
 * and {@code -Dbench.r2dbc.mariadb}). One database only: {@code -p database=mariadb}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(4)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 2, time = 5)
@Measurement(iterations = 5, time = 10)
public class R2dbcFenceBenchmark {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** {@code postgresql} or {@code mariadb}. */
    @Param({"postgresql", "mariadb"})
    public String database;

    private ConnectionPool pool;
    private DatabaseClient client;
    private TransactionalOperator transactions;
    private R2dbcFenceStore store;
    private String fenceTable;
    private String rows;
    final AtomicInteger clients = new AtomicInteger();

    @Setup(Level.Trial)
    public void start() {
        R2dbcDialect dialect = switch (database) {
            case "postgresql" -> R2dbcDialect.POSTGRESQL;
            case "mariadb" -> R2dbcDialect.MARIADB;
            default -> throw new IllegalArgumentException("R2dbcFenceBenchmark: database '" + database
                    + "' is not postgresql or mariadb");
        };
        String url = System.getProperty("bench.r2dbc." + database, dialect == R2dbcDialect.POSTGRESQL
                ? "r2dbc:pool:postgresql://postgres@127.0.0.1:5432/test"
                : "r2dbc:pool:mariadb://root@127.0.0.1:3306/test");
        pool = (ConnectionPool) ConnectionFactories.get(url + "?maxSize=8&initialSize=8");
        client = DatabaseClient.create(pool);
        transactions = TransactionalOperator.create(new R2dbcTransactionManager(pool));
        String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        fenceTable = "bench_r2fence_" + suffix;
        rows = "bench_r2rows_" + suffix;
        run((dialect == R2dbcDialect.POSTGRESQL ? FenceSql.POSTGRESQL : FenceSql.MARIADB).createTableSql(fenceTable));
        run("CREATE TABLE " + rows + " (k VARCHAR(64) NOT NULL, v INT NOT NULL)");
        store = R2dbcFenceStore.builder(pool).table(fenceTable).build();
        store.verify();
        // each client's fence row exists before the clients start: the measured checks are re-checks of a row
        for (int index = 0; index < JdbcFenceBenchmark.SEEDED_CLIENTS; index++) {
            Client seed = new Client();
            seed.assign(index);
            fenced(seed);
        }
    }

    @TearDown(Level.Trial)
    public void stop() {
        try {
            run("DROP TABLE IF EXISTS " + fenceTable);
            run("DROP TABLE IF EXISTS " + rows);
        } finally {
            pool.dispose();
        }
    }

    private void run(String sql) {
        client.sql(sql).then().block(TIMEOUT);
    }

    /** One client thread: its resource and the one token it presents. */
    @State(Scope.Thread)
    public static class Client {
        String key;
        String resource;
        FencingToken token;

        @Setup(Level.Trial)
        public void start(R2dbcFenceBenchmark bench) {
            assign(bench.clients.getAndIncrement());
        }

        void assign(int index) {
            key = "client-" + index;
            resource = "bench:" + key;
            token = new FencingToken(resource, 1, "lease-" + index);
        }
    }

    private Mono<Void> insert(Client c) {
        return client.sql("INSERT INTO " + rows + " (k, v) VALUES (:k, 1)").bind("k", c.key).then();
    }

    private Object fenced(Client c) {
        return transactions.transactional(store.fence(c.resource, c.token, insert(c).thenReturn(c.key).flux()))
                .blockLast(TIMEOUT);
    }

    @Benchmark
    public Object insertUnfenced(Client c) {
        return transactions.transactional(insert(c).thenReturn(c.key)).block(TIMEOUT);
    }

    @Benchmark
    public Object insertFenced(Client c) {
        return fenced(c);
    }
}
