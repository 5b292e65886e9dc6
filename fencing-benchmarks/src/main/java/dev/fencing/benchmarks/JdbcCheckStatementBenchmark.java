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
import org.openjdk.jmh.annotations.Param;
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
 * The cost of the family-floor probe in the check statement: the statement alone, over one plain JDBC connection
 * (no pool, no Spring, no lock wait bound around it), autocommit off. Each call is one execution of the prepared
 * statement (one round trip: the row lookups, the row lock, the update, the returned row); a {@code ROLLBACK} after
 * each call, outside the timed part (a {@link Level#Invocation} tear-down), puts the row back, so that no commit and
 * no log flush (fsync) is in the figures, and the same token is accepted every time. Three shapes in one run, each
 * on a resource whose row is in the table (the update path, a lease's steady state) with max_seen 1, presented token
 * 2: {@link #floorProbeHit} the current statement for a keyed resource whose family has a floor row (the probe finds
 * it); {@link #noFamily} the statement for a resource without a family ({@link FenceSql#familylessCheckSql}, which
 * reads no floor); {@link #previousRelease} the statement of the release before the floor join
 * ({@link #PREVIOUS_POSTGRESQL}, {@link #PREVIOUS_MARIADB}). The first against the last is what the family floor costs
 * a resource with a family (on PostgreSQL an {@code INSERT ... SELECT} whose update path reads the presented token and
 * holder from a one-row sub-select); the last two should cost the same (the same statement, give or take its markers'
 * casts). The setup asserts that each shape returns (2, holder), and every call checks max_seen again, so a failing
 * statement cannot be measured quietly. The table (the shipped schema under a random name) is dropped at tear-down.
 *
 * <p>Needs the databases of {@link JdbcFenceBenchmark} (see {@link BenchDatabase}); one only:
 * {@code -p database=postgresql}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Threads(1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 5)
@Measurement(iterations = 5, time = 10)
public class JdbcCheckStatementBenchmark {

    /**
     * PostgreSQL's check statement before the family floor: {@code FenceSql.POSTGRESQL} as of commit 5ba0cfc, the
     * parent of 5654bed, which added the floor join ({@code git log -p -S floor_key -- FenceSql.java}). %1$s is the
     * table, %2$s the bound on one advance (empty: unbounded, the default). Parameters: resource, token, holder.
     */
    static final String PREVIOUS_POSTGRESQL = """
            INSERT INTO %1$s AS f (resource, max_seen, holder, updated_at)
            VALUES (?, ?, ?, CURRENT_TIMESTAMP)
            ON CONFLICT (resource) DO UPDATE SET
                updated_at = CASE WHEN (f.max_seen < EXCLUDED.max_seen%2$s)
                                    OR (f.max_seen = EXCLUDED.max_seen AND f.holder = EXCLUDED.holder)
                                  THEN EXCLUDED.updated_at ELSE f.updated_at END,
                holder     = CASE WHEN f.max_seen < EXCLUDED.max_seen%2$s THEN EXCLUDED.holder ELSE f.holder END,
                max_seen   = CASE WHEN f.max_seen < EXCLUDED.max_seen%2$s THEN EXCLUDED.max_seen ELSE f.max_seen END
            RETURNING max_seen, holder""";

    /** MariaDB's check statement before the family floor: {@code FenceSql.MARIADB} as of 5ba0cfc (as above). */
    static final String PREVIOUS_MARIADB = """
            INSERT INTO %1$s (resource, max_seen, holder, updated_at)
            VALUES (?, ?, ?, CURRENT_TIMESTAMP(6))
            ON DUPLICATE KEY UPDATE
                updated_at = IF((max_seen < VALUES(max_seen)%2$s)
                                OR (max_seen = VALUES(max_seen) AND holder = VALUES(holder)),
                                VALUES(updated_at), updated_at),
                holder     = IF(max_seen < VALUES(max_seen)%2$s, VALUES(holder), holder),
                max_seen   = IF(max_seen < VALUES(max_seen)%2$s, VALUES(max_seen), max_seen)
            RETURNING max_seen, holder""";

    static final String FAMILY = "bench";
    /** A keyed resource of {@link #FAMILY}, which has a floor row. */
    static final String FLOORED = FAMILY + ":floored";
    /** A resource without a family (no ':'): its floor key is null. */
    static final String UNKEYED = "bench-unkeyed";
    /** The resource the previous release's statement checks. */
    static final String PREVIOUS = FAMILY + ":previous";
    static final String HOLDER = "bench-holder";
    static final long SEEDED = 1;
    static final long FLOOR = 1;
    static final long PRESENTED = 2;

    /** {@code postgresql} or {@code mariadb} ({@link BenchDatabase}). */
    @Param({"postgresql", "mariadb"})
    public String database;

    private Connection connection;
    private String table;
    private PreparedStatement current;
    private PreparedStatement familyless;
    private PreparedStatement previous;
    /** {@link #FLOORED}'s floor key. */
    private String flooredKey;
    /** Each shape's parameters ({@link FenceSql#checkParameters} for the current statement), computed once. */
    private Object[] flooredParameters;
    private Object[] unkeyedParameters;
    private Object[] previousParameters;

    @Setup(Level.Trial)
    public void start() throws SQLException {
        BenchDatabase db = BenchDatabase.of("JdbcCheckStatementBenchmark", database);
        connection = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
        table = "bench_check_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        FenceSql sql = db.fenceSql();
        String now = db == BenchDatabase.MARIADB ? "CURRENT_TIMESTAMP(6)" : "CURRENT_TIMESTAMP";
        try (Statement ddl = connection.createStatement()) {
            ddl.execute(sql.createTableSql(table));
        }
        try (PreparedStatement seed = connection.prepareStatement("INSERT INTO " + table
                + " (resource, max_seen, holder, updated_at) VALUES (?, ?, ?, " + now + ")")) {
            for (String resource : new String[] {FLOORED, UNKEYED, PREVIOUS}) {
                seed.setString(1, resource);
                seed.setLong(2, SEEDED);
                seed.setString(3, HOLDER);
                seed.executeUpdate();
            }
            seed.setString(1, FenceSql.familyFloorKey(FAMILY));
            seed.setLong(2, FLOOR);
            seed.setString(3, null);
            seed.executeUpdate();
        }
        connection.setAutoCommit(false);
        current = connection.prepareStatement(sql.checkSql(table, FenceRule.UNBOUNDED));
        familyless = connection.prepareStatement(sql.familylessCheckSql(table, FenceRule.UNBOUNDED));
        previous = connection.prepareStatement((db == BenchDatabase.MARIADB ? PREVIOUS_MARIADB : PREVIOUS_POSTGRESQL)
                .formatted(table, ""));
        flooredKey = FenceSql.floorKeyOf(FLOORED);
        flooredParameters = sql.checkParameters(FLOORED, PRESENTED, HOLDER);
        unkeyedParameters = FenceSql.familylessCheckParameters(UNKEYED, PRESENTED, HOLDER);
        previousParameters = new Object[] {PREVIOUS, PRESENTED, HOLDER};
        if (FenceSql.floorKeyOf(UNKEYED) != null) {
            throw new IllegalStateException("JdbcCheckStatementBenchmark: '" + UNKEYED
                    + "' has a family, expected none");
        }
        assertFloorRow();
        assertShape("floorProbeHit", current, flooredParameters);
        assertShape("noFamily", familyless, unkeyedParameters);
        assertShape("previousRelease", previous, previousParameters);
    }

    /** Fails unless the floor key of {@link #FLOORED} names a row holding {@link #FLOOR}: the probe must hit. */
    private void assertFloorRow() throws SQLException {
        try (PreparedStatement read = connection.prepareStatement("SELECT max_seen, holder FROM " + table
                + " WHERE resource = ?")) {
            read.setString(1, flooredKey);
            try (ResultSet rs = read.executeQuery()) {
                if (!rs.next() || rs.getLong(1) != FLOOR || rs.getString(2) != null) {
                    throw new IllegalStateException("JdbcCheckStatementBenchmark (" + database + "): no floor row "
                            + "for family '" + FAMILY + "' holding " + FLOOR + " in " + table);
                }
            }
        }
        connection.rollback();
    }

    @TearDown(Level.Trial)
    public void stop() throws SQLException {
        dropAndClose(connection, table);
    }

    /** The current statement for a keyed resource whose family has a floor row. */
    @Benchmark
    public long floorProbeHit() throws SQLException {
        return check(current, flooredParameters);
    }

    /** The statement the store sends for a resource without a family, which reads no floor. */
    @Benchmark
    public long noFamily() throws SQLException {
        return check(familyless, unkeyedParameters);
    }

    /** The previous release's statement, without the floor join. */
    @Benchmark
    public long previousRelease() throws SQLException {
        return check(previous, previousParameters);
    }

    /** Puts back the row the call's check advanced; not timed. */
    @TearDown(Level.Invocation)
    public void rollback() throws SQLException {
        connection.rollback();
    }

    /** Runs one check (the caller's tear-down rolls it back); returns max_seen, which must be the presented token. */
    private long check(PreparedStatement statement, Object[] parameters) throws SQLException {
        long maxSeen;
        try (ResultSet rs = execute(statement, parameters)) {
            maxSeen = rs.next() ? rs.getLong(1) : -1;
        }
        if (maxSeen != PRESENTED) {
            throw new IllegalStateException("JdbcCheckStatementBenchmark (" + database + "): the check of '"
                    + parameters[0] + "' returned max_seen " + maxSeen
                    + " (-1: no row), expected the presented token " + PRESENTED);
        }
        return maxSeen;
    }

    /** Fails unless one execution of a shape returns the row it must: (presented token, {@link #HOLDER}). */
    private void assertShape(String shape, PreparedStatement statement, Object[] parameters) throws SQLException {
        Object resource = parameters[0];
        try (ResultSet rs = execute(statement, parameters)) {
            if (!rs.next()) {
                throw new IllegalStateException("JdbcCheckStatementBenchmark (" + database + "), shape " + shape
                        + ": the check of '" + resource + "' returned no row from " + table);
            }
            long maxSeen = rs.getLong(1);
            String holder = rs.getString(2);
            if (maxSeen != PRESENTED || !HOLDER.equals(holder)) {
                throw new IllegalStateException("JdbcCheckStatementBenchmark (" + database + "), shape " + shape
                        + ": the check of '" + resource + "' returned (" + maxSeen + ", " + holder + "), expected ("
                        + PRESENTED + ", " + HOLDER + ")");
            }
        } finally {
            connection.rollback();
        }
    }

    /** Binds {@code parameters} (texts, some null, and longs) in order, typed, and runs the statement. */
    private static ResultSet execute(PreparedStatement statement, Object[] parameters) throws SQLException {
        bind(statement, parameters);
        return statement.executeQuery();
    }

    /** Binds {@code parameters} (texts, some null, and longs) in order, typed. */
    static void bind(PreparedStatement statement, Object[] parameters) throws SQLException {
        for (int i = 0; i < parameters.length; i++) {
            if (parameters[i] instanceof Long value) {
                statement.setLong(i + 1, value);
            } else {
                statement.setString(i + 1, (String) parameters[i]);
            }
        }
    }

    /** Rolls back, drops {@code table} and closes {@code connection} (a trial's tear-down). */
    static void dropAndClose(Connection connection, String table) throws SQLException {
        try {
            connection.rollback();
            connection.setAutoCommit(true);
            try (Statement ddl = connection.createStatement()) {
                ddl.execute("DROP TABLE IF EXISTS " + table);
            }
        } finally {
            connection.close();
        }
    }
}
