package dev.fencing.verify.workload;

import dev.fencing.verify.history.CommitRow;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * The tables of one run on PostgreSQL, named after the run so that runs never share state: the fence table
 * ({@code JdbcFenceStore}'s max_seen), the lease table ({@code JdbcTokenIssuer}'s), and the workloads' tables: the
 * set table (one row per resource with its whole set as text), the counter table (one row per resource) and the
 * append log (one row per append, numbered by an identity column). Created before the clients start, read at the
 * end, dropped after.
 */
public final class LockSetTables {

    private final String jdbcUrl;
    private final String user;
    private final String prefix;

    /** Tables {@code <prefix>_fence}, {@code _lease}, {@code _set}, {@code _counter} and {@code _append}. */
    public LockSetTables(String jdbcUrl, String user, String prefix) {
        if (!prefix.matches("[a-z][a-z0-9_]{0,40}")) {
            throw new IllegalArgumentException("table prefix must be lower-case letters, digits, _: " + prefix);
        }
        this.jdbcUrl = jdbcUrl;
        this.user = user;
        this.prefix = prefix;
    }

    public String fence() {
        return prefix + "_fence";
    }

    public String lease() {
        return prefix + "_lease";
    }

    public String set() {
        return prefix + "_set";
    }

    public String counter() {
        return prefix + "_counter";
    }

    public String append() {
        return prefix + "_append";
    }

    /** The table the clients of {@code workload} read and write: the set, counter or append table. */
    public String data(String workload) {
        return switch (workload) {
            case "lock-set" -> set();
            case "counter" -> counter();
            case "append" -> append();
            default -> throw new IllegalArgumentException("unknown workload '" + workload + "'");
        };
    }

    /** Creates the tables for one resource. */
    public void create() throws SQLException {
        create(1);
    }

    /**
     * Creates the tables (the fence and lease tables as fencing-jdbc's scripts do), an empty set row and a zero
     * counter row for each of {@code resources} resources (ids 0 to resources - 1), and the empty append log.
     */
    public void create(int resources) throws SQLException {
        Resources.check(resources);
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + fence() + " (resource VARCHAR(256) NOT NULL PRIMARY KEY, "
                    + "max_seen BIGINT NOT NULL, holder VARCHAR(256), updated_at TIMESTAMP WITH TIME ZONE NOT NULL)");
            s.execute("CREATE TABLE " + lease() + " (resource VARCHAR(256) NOT NULL PRIMARY KEY, "
                    + "holder VARCHAR(256), token BIGINT NOT NULL, expires_at TIMESTAMP WITH TIME ZONE)");
            s.execute("CREATE TABLE " + set() + " (id INT PRIMARY KEY, elements TEXT NOT NULL)");
            s.execute("CREATE TABLE " + counter() + " (id INT PRIMARY KEY, value BIGINT NOT NULL)");
            s.execute("INSERT INTO " + set() + " (id, elements) SELECT g, '' FROM generate_series(0, "
                    + (resources - 1) + ") g");
            s.execute("INSERT INTO " + counter() + " (id, value) SELECT g, 0 FROM generate_series(0, "
                    + (resources - 1) + ") g");
            s.execute("CREATE TABLE " + append() + " (seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
                    + "resource VARCHAR(256) NOT NULL, token BIGINT, process INT NOT NULL, op BIGINT NOT NULL)");
        }
    }

    /** The set of resource 0 as stored now. */
    public List<Long> readSet() throws SQLException {
        return readSet(0);
    }

    /** The set of resource {@code row} as stored now. */
    public List<Long> readSet(int row) throws SQLException {
        return SetCodec.decode(readRow(set(), "elements", row, String.class));
    }

    /** The counter of resource {@code row} as stored now. */
    public long readCounter(int row) throws SQLException {
        return readRow(counter(), "value", row, Long.class);
    }

    /** The append log in its sequence order, one commit row per append. */
    public List<CommitRow> readAppends() throws SQLException {
        List<CommitRow> rows = new ArrayList<>();
        try (Connection c = connect();
             PreparedStatement p = c.prepareStatement("SELECT seq, resource, token, process, op FROM " + append()
                     + " ORDER BY seq");
             ResultSet r = p.executeQuery()) {
            while (r.next()) {
                Long token = r.getObject(3, Long.class);
                rows.add(new CommitRow(r.getLong(1), r.getString(2), token, r.getInt(4), r.getLong(5)));
            }
        }
        return rows;
    }

    private <T> T readRow(String table, String column, int row, Class<T> type) throws SQLException {
        try (Connection c = connect();
             PreparedStatement p = c.prepareStatement("SELECT " + column + " FROM " + table + " WHERE id = ?")) {
            p.setInt(1, row);
            try (ResultSet r = p.executeQuery()) {
                if (!r.next()) {
                    throw new SQLException("row " + row + " of " + table + " is missing");
                }
                return r.getObject(1, type);
            }
        }
    }

    /** Drops the tables that exist; never throws (returns the error, or null). */
    public SQLException drop() {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + fence() + ", " + lease() + ", " + set() + ", " + counter() + ", "
                    + append());
            return null;
        } catch (SQLException e) {
            return e;
        }
    }

    private Connection connect() throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", user);
        p.setProperty("connectTimeout", "10");
        p.setProperty("socketTimeout", "60");
        return DriverManager.getConnection(jdbcUrl, p);
    }
}
