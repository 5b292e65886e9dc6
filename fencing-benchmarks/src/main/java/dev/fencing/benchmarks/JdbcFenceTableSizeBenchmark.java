package dev.fencing.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.store.FencedCall;
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
import org.openjdk.jmh.infra.BenchmarkParams;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Check latency of {@link JdbcFenceStore} on PostgreSQL as the fence table grows: a table of its own filled with
 * {@code rows} resources ({@code accounts:0} ... by one {@code generate_series} insert, max_seen 1, holder
 * {@code seed}) and {@code ANALYZE}d, then one fenced transaction per operation (the store opens it: lock wait
 * bound, the check statement, an empty write, commit) on a resource drawn uniformly from all rows, so that a larger
 * table is also a colder one. Two checks: {@code checkNewerToken} presents a token above every max_seen (a global
 * sequence, so each check advances the row, as a new lease's first write does); {@code recheckSameHolder} presents
 * the seeded token again (the accepted re-check of a lease still held). Both update the row (the statement always
 * writes {@code updated_at}), so both leave a dead tuple. Each runs with {@code synchronous_commit} on and off (see
 * {@link #synchronousCommit}). One client thread by default; with {@code -t N} each thread advances only its own
 * share of the resources (see {@link Client}). The table's rows and sizes are printed after the fill and at
 * tear-down; the table is dropped at tear-down.
 *
 * <p>Needs PostgreSQL on 127.0.0.1:5432, database {@code test} (override with {@code -Dbench.jdbcUrl=...} and
 * {@code -Dbench.user=...}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Threads(1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 5)
@Measurement(iterations = 5, time = 10)
public class JdbcFenceTableSizeBenchmark {

    /** Resources in the fence table when the measurement starts. */
    @Param({"1000", "1000000"})
    public int rows;

    /**
     * The session's {@code synchronous_commit}: {@code on} is what an application has (each commit waits for its WAL
     * flush, which dominates the latency on a slow disk); {@code off} leaves out the flush, so that what the table's
     * size changes (finding the row in the index and heap) is not hidden under it.
     */
    @Param({"on", "off"})
    public String synchronousCommit;

    private HikariDataSource pool;
    private JdbcTemplate jdbc;
    private String table;
    JdbcFenceStore store;
    /** Token values above every seeded max_seen (1) and strictly increasing across threads. */
    final AtomicLong sequence = new AtomicLong(1);
    final AtomicInteger clients = new AtomicInteger();
    final FencedCall<Long> emptyWrite = () -> 1L;

    @Setup(Level.Trial)
    public void start() {
        if (rows < 1) {
            throw new IllegalArgumentException("JdbcFenceTableSizeBenchmark: rows must be at least 1, was " + rows);
        }
        if (!synchronousCommit.equals("on") && !synchronousCommit.equals("off")) {
            throw new IllegalArgumentException("JdbcFenceTableSizeBenchmark: synchronousCommit must be on or off, was '"
                    + synchronousCommit + "'");
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(System.getProperty("bench.jdbcUrl", "jdbc:postgresql://127.0.0.1:5432/test"));
        config.setUsername(System.getProperty("bench.user", "postgres"));
        config.setMaximumPoolSize(8);
        config.setConnectionInitSql("SET synchronous_commit = " + synchronousCommit);
        pool = new HikariDataSource(config);
        jdbc = new JdbcTemplate(pool);
        table = "bench_scale_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        store = JdbcFenceStore.builder(pool).transactionManager(new DataSourceTransactionManager(pool))
                .table(table).createTableIfMissing(true).build();
        store.verify(); // creates the table (the schema the library ships) and checks it
        long started = System.nanoTime();
        int inserted = jdbc.update("INSERT INTO " + table + " (resource, max_seen, holder, updated_at) "
                + "SELECT 'accounts:' || g, 1, 'seed', CURRENT_TIMESTAMP FROM generate_series(0, ?) g", rows - 1);
        if (inserted != rows) {
            throw new IllegalStateException("JdbcFenceTableSizeBenchmark: inserted " + inserted + " rows into " + table
                    + ", expected " + rows);
        }
        jdbc.execute("ANALYZE " + table);
        report("synchronous_commit=" + synchronousCommit + ", after fill + ANALYZE ("
                + (System.nanoTime() - started) / 1_000_000 + " ms)");
    }

    @TearDown(Level.Trial)
    public void stop() {
        try {
            report("at tear-down, after " + (sequence.get() - 1) + " newer-token checks");
            jdbc.execute("DROP TABLE IF EXISTS " + table);
        } finally {
            pool.close();
        }
    }

    /** Prints the table's live and dead rows and its heap, index and total sizes. */
    private void report(String when) {
        Map<String, Object> sizes = jdbc.queryForMap("SELECT (SELECT count(*) FROM " + table + ") AS rows, "
                + "pg_relation_size(?::regclass) AS heap, pg_indexes_size(?::regclass) AS indexes, "
                + "pg_total_relation_size(?::regclass) AS total, "
                + "(SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = ?::regclass) AS dead", table, table,
                table, table);
        long count = ((Number) sizes.get("rows")).longValue();
        long heap = ((Number) sizes.get("heap")).longValue();
        long indexes = ((Number) sizes.get("indexes")).longValue();
        long total = ((Number) sizes.get("total")).longValue();
        Object dead = sizes.get("dead");
        System.out.printf("%n[fence table %s, %s] rows=%d dead=%s heap=%d B (%.1f B/row) indexes=%d B (%.1f B/row) "
                        + "total=%d B (%.1f B/row)%n", table, when, count, dead, heap, heap / (double) count, indexes,
                indexes / (double) count, total, total / (double) count);
    }

    /**
     * One client thread: the holder of the newer tokens it presents, and its share of the resources (those whose
     * number is its index modulo the thread count), so that two threads never race newer tokens on one resource (the
     * later value could commit first and the earlier one be refused as stale).
     */
    @State(Scope.Thread)
    public static class Client {
        String holder;
        int index;
        int stride;
        int share;

        @Setup(Level.Trial)
        public void join(JdbcFenceTableSizeBenchmark bench, BenchmarkParams params) {
            index = bench.clients.getAndIncrement();
            stride = params.getThreads();
            if (bench.rows < stride) {
                throw new IllegalArgumentException("JdbcFenceTableSizeBenchmark: rows (" + bench.rows
                        + ") must be at least the thread count (" + stride + ")");
            }
            share = (bench.rows - index + stride - 1) / stride;
            holder = "lease-" + index;
        }

        /** One of this thread's resources, drawn uniformly. */
        String ownResource() {
            return "accounts:" + (index + (long) stride * ThreadLocalRandom.current().nextInt(share));
        }
    }

    /** Any resource, drawn uniformly from all rows. */
    private String anyResource() {
        return "accounts:" + ThreadLocalRandom.current().nextInt(rows);
    }

    /** A token above the row's max_seen: the check advances it. */
    @Benchmark
    public Long checkNewerToken(Client client) throws Throwable {
        String resource = client.ownResource();
        return store.fence(resource, new FencingToken(resource, sequence.incrementAndGet(), client.holder), emptyWrite);
    }

    /** The seeded token again: the holder's accepted re-check, max_seen unchanged. */
    @Benchmark
    public Long recheckSameHolder() throws Throwable {
        String resource = anyResource();
        return store.fence(resource, new FencingToken(resource, 1, "seed"), emptyWrite);
    }
}
