package dev.fencing.verify.workload;

import dev.fencing.verify.database.Database;
import dev.fencing.verify.database.DatabaseKind;
import dev.fencing.verify.database.LibraryScripts;
import dev.fencing.verify.history.CommitRow;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The tables of one run, named after the run so that runs never share state: the fence table
 * ({@code JdbcFenceStore}'s max_seen) and the workloads' tables on the store's database (the set table, one row per
 * resource with its whole set as text; the counter table, one row per resource; the append log, one row per append,
 * numbered by an identity column), and the lease table ({@code JdbcTokenIssuer}'s) on the lease's database, which
 * may be another one (PostgreSQL or MariaDB). Created before the clients start, read at the end, dropped after.
 */
public final class LockSetTables {

    private final Database store;
    private final Database lease;
    private final String prefix;

    /** Tables {@code <prefix>_fence}, {@code _lease}, {@code _set}, {@code _counter} and {@code _append}, all on one
     * PostgreSQL.
     */
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

    /** The database of the fence and set tables. */
    public Database storeDatabase() {
        return store;
    }

    /** The database of the lease table. */
    public Database leaseDatabase() {
        return lease;
    }

    /** Creates the tables for one resource. */
    public void create() throws SQLException {
        create(1);
    }

    /**
     * Creates the fence and lease tables with fencing-jdbc's own scripts, an empty set row and a zero counter row for
     * each of {@code resources} resources (ids 0 to resources - 1), and the empty append log. A failure names the
     * database and the table.
     */
    public void create(int resources) throws SQLException {
        Resources.check(resources);
        try (Connection c = store.connect(); Statement s = c.createStatement()) {
            execute(s, store, fence(), LibraryScripts.fenceTable(store.kind(), fence()));
            execute(s, store, set(), "CREATE TABLE " + set() + " (id INT PRIMARY KEY, elements "
                    + store.kind().textType() + " NOT NULL)");
            execute(s, store, counter(), "CREATE TABLE " + counter()
                    + " (id INT PRIMARY KEY, value BIGINT NOT NULL)");
            String identity = store.kind() == DatabaseKind.MARIADB ? "BIGINT AUTO_INCREMENT"
                    : "BIGINT GENERATED ALWAYS AS IDENTITY";
            execute(s, store, append(), "CREATE TABLE " + append() + " (seq " + identity + " PRIMARY KEY, "
                    + "resource VARCHAR(256) NOT NULL, token BIGINT, process INT NOT NULL, op BIGINT NOT NULL)");
            for (int row = 0; row < resources; row++) {
                execute(s, store, set(), "INSERT INTO " + set() + " (id, elements) VALUES (" + row + ", '')");
                execute(s, store, counter(), "INSERT INTO " + counter() + " (id, value) VALUES (" + row + ", 0)");
            }
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
        try (Connection c = store.connect();
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
        try (Connection c = store.connect();
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
            s.execute("DROP TABLE IF EXISTS " + fence() + ", " + lease() + ", " + set() + ", " + counter() + ", "
                    + append());
            return null;
        } catch (SQLException e) {
            return e;
        }
    }
}
