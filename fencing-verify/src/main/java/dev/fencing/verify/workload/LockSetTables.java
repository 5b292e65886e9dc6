package dev.fencing.verify.workload;

import dev.fencing.verify.database.Database;
import dev.fencing.verify.database.DatabaseKind;
import dev.fencing.verify.database.LibraryScripts;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Objects;

/**
 * The tables of one lock-set run, named after the run so that runs never share state: the fence table
 * ({@code JdbcFenceStore}'s max_seen) and the set table (one row with the whole set as text) on the store's
 * database, and the lease table ({@code JdbcTokenIssuer}'s) on the lease's database, which may be another one
 * (PostgreSQL or MariaDB). Created before the clients start, read at the end, dropped after.
 */
public final class LockSetTables {

    private final Database store;
    private final Database lease;
    private final String prefix;

    /** Tables {@code <prefix>_fence}, {@code <prefix>_lease} and {@code <prefix>_set}, all on one PostgreSQL. */
    public LockSetTables(String jdbcUrl, String user, String prefix) {
        this(new Database(DatabaseKind.POSTGRESQL, jdbcUrl, user), null, prefix);
    }

    /**
     * @param store  where the fence and set tables go
     * @param lease  where the lease table goes, or null for the store's database
     * @param prefix the run's table prefix: lower-case letters, digits and {@code _}
     */
    public LockSetTables(Database store, Database lease, String prefix) {
        if (!prefix.matches("[a-z][a-z0-9_]{0,40}")) {
            throw new IllegalArgumentException("table prefix must be lower-case letters, digits, _: " + prefix);
        }
        this.store = Objects.requireNonNull(store, "store");
        this.lease = lease == null ? store : lease;
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

    /** The database of the fence and set tables. */
    public Database storeDatabase() {
        return store;
    }

    /** The database of the lease table. */
    public Database leaseDatabase() {
        return lease;
    }

    /**
     * Creates the fence and lease tables with fencing-jdbc's own scripts, the set table and its empty row. A failure
     * names the database and the table.
     */
    public void create() throws SQLException {
        try (Connection c = store.connect(); Statement s = c.createStatement()) {
            execute(s, store, fence(), LibraryScripts.fenceTable(store.kind(), fence()));
            execute(s, store, set(), "CREATE TABLE " + set() + " (id INT PRIMARY KEY, elements "
                    + store.kind().textType() + " NOT NULL)");
            execute(s, store, set(), "INSERT INTO " + set() + " (id, elements) VALUES (1, '')");
        }
        try (Connection c = lease.connect(); Statement s = c.createStatement()) {
            execute(s, lease, lease(), LibraryScripts.leaseTable(lease.kind(), lease()));
        }
    }

    private static void execute(Statement s, Database db, String table, String sql) throws SQLException {
        try {
            s.execute(sql);
        } catch (SQLException e) {
            throw new SQLException("cannot create " + table + " on " + db.kind().label() + " at " + db.url() + ": "
                    + e.getMessage(), e.getSQLState(), e.getErrorCode(), e);
        }
    }

    /** The set as stored now. */
    public List<Long> readSet() throws SQLException {
        try (Connection c = store.connect();
             PreparedStatement p = c.prepareStatement("SELECT elements FROM " + set() + " WHERE id = 1");
             ResultSet r = p.executeQuery()) {
            if (!r.next()) {
                throw new SQLException("the set row of " + set() + " is missing");
            }
            return SetCodec.decode(r.getString(1));
        }
    }

    /** Drops the tables that exist, on each database; never throws (returns the first error, or null). */
    public SQLException drop() {
        SQLException first = drop(store);
        if (!lease.sameAs(store)) {
            SQLException second = drop(lease);
            if (first == null) {
                first = second;
            } else if (second != null) {
                first.addSuppressed(second);
            }
        }
        return first;
    }

    private SQLException drop(Database db) {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + fence() + ", " + lease() + ", " + set());
            return null;
        } catch (SQLException e) {
            return e;
        }
    }
}
