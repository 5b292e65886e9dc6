package dev.fencing.verify.workload;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;

/**
 * The tables of one lock-set run on PostgreSQL, named after the run so that runs never share state: the fence table
 * ({@code JdbcFenceStore}'s max_seen), the lease table ({@code JdbcTokenIssuer}'s) and the set table (one row with
 * the whole set as text). Created before the clients start, read at the end, dropped after.
 */
public final class LockSetTables {

    private final String jdbcUrl;
    private final String user;
    private final String prefix;

    /** Tables {@code <prefix>_fence}, {@code <prefix>_lease} and {@code <prefix>_set}. */
    public LockSetTables(String jdbcUrl, String user, String prefix) {
        if (!prefix.matches("[a-z][a-z0-9_]{0,40}")) {
            throw new IllegalArgumentException("table prefix must be lower-case letters, digits, _: " + prefix);
        }
        this.jdbcUrl = jdbcUrl;
        this.user = user;
        this.prefix = prefix;
    }

    /** The run's prefix of every table name ({@code verify_<id>}), also naming its clients' database sessions. */
    public String prefix() {
        return prefix;
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

    /** Creates the three tables (the fence and lease tables as fencing-jdbc's scripts do) and the empty set row. */
    public void create() throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + fence() + " (resource VARCHAR(256) NOT NULL PRIMARY KEY, "
                    + "max_seen BIGINT NOT NULL, holder VARCHAR(256), updated_at TIMESTAMP WITH TIME ZONE NOT NULL)");
            s.execute("CREATE TABLE " + lease() + " (resource VARCHAR(256) NOT NULL PRIMARY KEY, "
                    + "holder VARCHAR(256), token BIGINT NOT NULL, expires_at TIMESTAMP WITH TIME ZONE)");
            s.execute("CREATE TABLE " + set() + " (id INT PRIMARY KEY, elements TEXT NOT NULL)");
            s.execute("INSERT INTO " + set() + " (id, elements) VALUES (1, '')");
        }
    }

    /** The set as stored now. */
    public List<Long> readSet() throws SQLException {
        try (Connection c = connect();
             PreparedStatement p = c.prepareStatement("SELECT elements FROM " + set() + " WHERE id = 1");
             ResultSet r = p.executeQuery()) {
            if (!r.next()) {
                throw new SQLException("the set row of " + set() + " is missing");
            }
            return SetCodec.decode(r.getString(1));
        }
    }

    /** Drops the tables that exist; never throws (returns the error, or null). */
    public SQLException drop() {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + fence() + ", " + lease() + ", " + set());
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
