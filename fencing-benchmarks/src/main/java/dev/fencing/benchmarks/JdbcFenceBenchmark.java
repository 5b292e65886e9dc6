package dev.fencing.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.spring.EnableFencing;
import dev.fencing.token.FencingToken;
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
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Fenced against unfenced transactions on PostgreSQL and on MariaDB (the {@link #database} parameter; both by default,
 * so one run gives both tables) through the library: a Spring transaction around a repository call on a Spring proxy,
 * JDBC via JdbcTemplate; 4 client threads, each fencing its own entity with one lease's token (the fence's upsert then
 * hits one row per client, as in production where clients work on different entities). Measured: committed
 * transactions per second, commit (and its log flush, as the server is configured) included. Shapes: a
 * single-row insert, and read + two updates + insert. The {@code ...FencedAtCommit} methods run the same repository
 * in a second application context whose store checks at commit ({@code JdbcFenceStore.Builder#checkAtCommit}: the
 * check travels with {@code COMMIT} in one round trip), on a fence table of its own, so that both modes' ratios to
 * the unfenced transactions come from one run. Every trial creates its tables under a random suffix and drops them
 * at tear-down.
 *
 * <p>Needs PostgreSQL on 127.0.0.1:5432, database {@code test}, user {@code postgres} (override with
 * {@code -Dbench.jdbcUrl=...}, {@code -Dbench.user=...}, {@code -Dbench.password=...}), and MariaDB on
 * 127.0.0.1:3306, database {@code test}, user {@code root} without a password (override with
 * {@code -Dbench.mariadb.jdbcUrl=...} and so on, see {@link BenchDatabase}). The stores checking at commit are
 * PostgreSQL's only: on MariaDB the store refuses the mode, and the {@code ...FencedAtCommit} methods fail. One
 * database only: {@code -p database=postgresql}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(4)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 2, time = 5)
@Measurement(iterations = 5, time = 10)
public class JdbcFenceBenchmark {

    @Configuration(proxyBeanMethods = false)
    @EnableFencing
    static class Fencing {
    }

    /** {@code postgresql} or {@code mariadb} ({@link BenchDatabase}). */
    @Param({"postgresql", "mariadb"})
    public String database;

    /** Clients whose fence rows are created before the measurement: more than {@link Threads} says, for a larger -t. */
    static final int SEEDED_CLIENTS = 16;

    private HikariDataSource pool;
    private AnnotationConfigApplicationContext context;
    private AnnotationConfigApplicationContext atCommitContext;
    private String atCommitFenceTable;
    private JdbcTemplate jdbc;
    private String fenceTable;
    private String rows;
    private String accounts;
    BenchRepository repository;
    BenchRepository atCommitRepository;
    TransactionTemplate transactions;
    final AtomicInteger clients = new AtomicInteger();

    @Setup(Level.Trial)
    public void start() {
        BenchDatabase db = BenchDatabase.of("JdbcFenceBenchmark", database);
        HikariConfig config = db.poolConfig();
        config.setMaximumPoolSize(8);
        pool = new HikariDataSource(config);
        jdbc = new JdbcTemplate(pool);
        String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        fenceTable = "bench_fence_" + suffix;
        atCommitFenceTable = "bench_fence_commit_" + suffix;
        rows = "bench_rows_" + suffix;
        accounts = "bench_accounts_" + suffix;
        jdbc.execute("CREATE TABLE " + rows + " (id " + db.generatedKey()
                + ", k VARCHAR(64) NOT NULL, v INT NOT NULL)");
        jdbc.execute("CREATE TABLE " + accounts + " (id INT PRIMARY KEY, balance BIGINT NOT NULL)");
        int filled = jdbc.update("INSERT INTO " + accounts + " (id, balance) SELECT g.n, 1000000 FROM "
                + db.numbers(63));
        if (filled != 64) {
            throw new IllegalStateException("JdbcFenceBenchmark (" + database + "): inserted " + filled
                    + " accounts into " + accounts + ", expected 64");
        }

        DataSourceTransactionManager transactionManager = new DataSourceTransactionManager(pool);
        context = new AnnotationConfigApplicationContext();
        context.registerBean(DataSourceTransactionManager.class, () -> transactionManager);
        context.registerBean(JdbcFenceStore.class, () -> JdbcFenceStore.builder(pool)
                .transactionManager(transactionManager).table(fenceTable).createTableIfMissing(true).build());
        context.registerBean(BenchRepository.class, () -> new BenchRepository(jdbc, rows, accounts));
        context.register(Fencing.class);
        context.refresh();
        repository = context.getBean(BenchRepository.class);
        atCommitContext = new AnnotationConfigApplicationContext();
        if (!atCommit()) {
            // MariaDB: the store refuses checkAtCommit (an implicit commit in a body would commit before the check);
            // the ...FencedAtCommit methods fail there, and run-all.sh asks for them on PostgreSQL only
            atCommitContext.refresh();
        } else {
            atCommitContext.registerBean(DataSourceTransactionManager.class, () -> transactionManager);
            atCommitContext.registerBean(JdbcFenceStore.class, () -> JdbcFenceStore.builder(pool)
                    .transactionManager(transactionManager).table(atCommitFenceTable).createTableIfMissing(true)
                    .checkAtCommit(true).build());
            atCommitContext.registerBean(BenchRepository.class, () -> new BenchRepository(jdbc, rows, accounts));
            atCommitContext.register(Fencing.class);
            atCommitContext.refresh();
            atCommitRepository = atCommitContext.getBean(BenchRepository.class);
        }
        transactions = new TransactionTemplate(transactionManager);
        // each client's fence row exists before the clients start, in both tables: the measured checks are re-checks
        // of an existing row, as for an entity that is written again; and InnoDB's gap locks would otherwise deadlock
        // the clients' concurrent first inserts (the fence then refuses them as a conflict, to be retried)
        for (int index = 0; index < SEEDED_CLIENTS; index++) {
            String key = "client-" + index;
            try (FencingScope ignored = FencingContext.bind(new FencingToken("bench:" + key, 1, "lease-" + index))) {
                transactions.executeWithoutResult(status -> repository.insertFenced(key, 0));
                if (atCommit()) {
                    transactions.executeWithoutResult(status -> atCommitRepository.insertFenced(key, 0));
                }
            }
        }
    }

    /** Whether this run's database can check at commit (PostgreSQL; MariaDB's store refuses it). */
    private boolean atCommit() {
        return !database.equals("mariadb");
    }

    /** The store checking at commit's repository, or a failure naming why this database has none. */
    private BenchRepository atCommitRepository() {
        if (atCommitRepository == null) {
            throw new UnsupportedOperationException("checkAtCommit is refused on " + database + " (PostgreSQL only)");
        }
        return atCommitRepository;
    }

    @TearDown(Level.Trial)
    public void stop() {
        context.close();
        atCommitContext.close();
        jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
        jdbc.execute("DROP TABLE IF EXISTS " + atCommitFenceTable);
        jdbc.execute("DROP TABLE IF EXISTS " + rows);
        jdbc.execute("DROP TABLE IF EXISTS " + accounts);
        pool.close();
    }

    /** One client: its entity, the token of its lease, and two accounts of its own. */
    @State(Scope.Thread)
    public static class Client {
        String key;
        FencingToken token;
        int from;
        int to;

        @Setup(Level.Trial)
        public void join(JdbcFenceBenchmark bench) {
            int index = bench.clients.getAndIncrement();
            key = "client-" + index;
            token = new FencingToken("bench:" + key, 1, "lease-" + index);
            from = index * 2;
            to = index * 2 + 1;
        }
    }

    @Benchmark
    public void insertUnfenced(Client client) {
        transactions.executeWithoutResult(status -> repository.insertPlain(client.key, 1));
    }

    @Benchmark
    public void insertFenced(Client client) {
        try (FencingScope ignored = FencingContext.bind(client.token)) {
            transactions.executeWithoutResult(status -> repository.insertFenced(client.key, 1));
        }
    }

    @Benchmark
    public void insertFencedAtCommit(Client client) {
        try (FencingScope ignored = FencingContext.bind(client.token)) {
            transactions.executeWithoutResult(status -> atCommitRepository().insertFenced(client.key, 1));
        }
    }

    @Benchmark
    public void fourStatementsUnfenced(Client client) {
        transactions.executeWithoutResult(status -> repository.transferPlain(client.key, client.from, client.to));
    }

    @Benchmark
    public void fourStatementsFenced(Client client) {
        try (FencingScope ignored = FencingContext.bind(client.token)) {
            transactions.executeWithoutResult(status -> repository.transferFenced(client.key, client.from, client.to));
        }
    }

    @Benchmark
    public void fourStatementsFencedAtCommit(Client client) {
        try (FencingScope ignored = FencingContext.bind(client.token)) {
            transactions.executeWithoutResult(status -> atCommitRepository().transferFenced(client.key, client.from,
                    client.to));
        }
    }
}
