package dev.fencing.benchmarks;

import dev.fencing.rule.FenceRule;
import dev.fencing.store.sql.FenceSql;
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

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The JDBC store's check on PostgreSQL with its lock wait bound, two shapes of one round trip each, over one plain
 * pgjdbc connection (autocommit off, a {@code ROLLBACK} after each call outside the timed part, as in
 * {@link JdbcCheckStatementBenchmark}): {@link #jdbcThreeStatementsOneText} the previous release's text, frozen here
 * ({@link #previousText}: a query that swaps in the bound, the check, a query that puts the caller's back, sent as one
 * batch of protocol messages; the check's row is the second result; the JDBC store still sends it) and
 * {@link #jdbcTwoStatementsOneText}: the R2DBC store's two statements ({@link FenceSql#swapInLockTimeoutSql}, then
 * the check whose {@code RETURNING} puts the caller's back, {@link FenceSql#restoringCheckSql}) as one text. What the
 * third statement costs the server, with the round trip the same: nothing measurable, so the JDBC store keeps three
 * (the two-statement text also fails under pgjdbc's {@code prepareThreshold=-1}). Both on a keyed resource whose row
 * holds max_seen 1, presented token 2; each call asserts the row it got back.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Threads(1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 5)
@Measurement(iterations = 5, time = 10)
public class JdbcBoundedCheckBenchmark {

    static final String RESOURCE = "bench:bounded";
    static final String HOLDER = "bench-holder";
    static final long PRESENTED = 2;

    private Connection connection;
    private String table;
    private PreparedStatement text;
    private PreparedStatement two;
    private Object[] parameters;

    @Setup(Level.Trial)
    public void start() throws SQLException {
        BenchDatabase db = BenchDatabase.of("JdbcBoundedCheckBenchmark", "postgresql");
        connection = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
        table = "bench_bounded_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        FenceSql sql = FenceSql.POSTGRESQL;
        try (Statement ddl = connection.createStatement()) {
            ddl.execute(sql.createTableSql(table));
            ddl.execute("INSERT INTO " + table + " (resource, max_seen, holder, updated_at) VALUES ('" + RESOURCE
                    + "', 1, '" + HOLDER + "', CURRENT_TIMESTAMP)");
        }
        connection.setAutoCommit(false);
        text = connection.prepareStatement(previousText(sql.checkSql(table, FenceRule.UNBOUNDED), "5000ms"));
        two = connection.prepareStatement(sql.swapInLockTimeoutSql("5000ms") + ";\n"
                + sql.restoringCheckSql(table, FenceRule.UNBOUNDED));
        parameters = sql.checkParameters(RESOURCE, PRESENTED, HOLDER);
        jdbcThreeStatementsOneText();
        connection.rollback();
        jdbcTwoStatementsOneText();
        connection.rollback();
    }

    /**
     * The previous release's bounded check ({@code FenceSql.boundedCheckSql} as of commit d4169ab): the bound swapped
     * in, the check, the caller's bound put back, as one text.
     */
    static String previousText(String check, String lockTimeout) {
        return "SELECT set_config('fencing.lock_timeout', current_setting('lock_timeout'), true), "
                + "set_config('lock_timeout', '" + lockTimeout + "', true);\n" + check + ";\n"
                + "SELECT set_config('lock_timeout', current_setting('fencing.lock_timeout'), true)";
    }

    @TearDown(Level.Invocation)
    public void rollback() throws SQLException {
        connection.rollback();
    }

    @TearDown(Level.Trial)
    public void stop() throws SQLException {
        JdbcCheckStatementBenchmark.dropAndClose(connection, table);
    }

    @Benchmark
    public long jdbcThreeStatementsOneText() throws SQLException {
        return secondResult(text);
    }

    @Benchmark
    public long jdbcTwoStatementsOneText() throws SQLException {
        return secondResult(two);
    }

    private long secondResult(PreparedStatement statement) throws SQLException {
        bind(statement);
        statement.execute();
        if (!statement.getMoreResults()) {
            throw new IllegalStateException("the bounded text returned no second result");
        }
        try (ResultSet rs = statement.getResultSet()) {
            return expect(rs);
        }
    }

    private void bind(PreparedStatement statement) throws SQLException {
        JdbcCheckStatementBenchmark.bind(statement, parameters);
    }

    private static long expect(ResultSet rs) throws SQLException {
        long maxSeen = rs.next() ? rs.getLong(1) : -1;
        if (maxSeen != PRESENTED) {
            throw new IllegalStateException("the check returned max_seen " + maxSeen + ", not " + PRESENTED);
        }
        return maxSeen;
    }
}
