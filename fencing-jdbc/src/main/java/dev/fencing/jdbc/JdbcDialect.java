package dev.fencing.jdbc;

import dev.fencing.store.sql.FenceSql;

import java.util.Locale;

/**
 * The database a {@link JdbcFenceStore} and a {@link JdbcTokenIssuer} run on: chosen with the builders'
 * {@code dialect(...)} or detected from the connection. It selects the SQL of the fence table (its DDL, read from the
 * schema script shipped in the jar, and the single statement that checks a token against
 * max_seen, advances it when the rule accepts, takes the row lock that serializes fenced writes to the resource
 * until commit, and returns the row as it now stands; both written once in fencing-core, shared with the reactive
 * store), and selects the lease table's SQL for the issuer (package-private
 * {@code LeaseDialect}). Identifiers are validated before they reach these templates. Named {@code FenceDialect} before
 * 1.0.
 */
public enum JdbcDialect {

    /** PostgreSQL 9.5+: {@code INSERT ... ON CONFLICT DO UPDATE ... RETURNING}. */
    POSTGRESQL("PostgreSQL", FenceSql.POSTGRESQL),

    /**
     * MariaDB 10.5+: {@code INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING}. The text columns use
     * {@code utf8mb4_nopad_bin}: the server default ({@code utf8mb4_general_ci}) would make {@code a}/{@code A},
     * {@code u}/{@code ü} and {@code x}/{@code "x "} one row.
     */
    MARIADB("MariaDB", FenceSql.MARIADB),

    /** H2 2.x: {@code MERGE ... USING} read back through {@code FINAL TABLE}. */
    H2("H2", FenceSql.H2);

    private final String productName;
    private final FenceSql sql;

    JdbcDialect(String productName, FenceSql sql) {
        this.productName = productName;
        this.sql = sql;
    }

    /** The dialect for a JDBC {@code DatabaseMetaData.getDatabaseProductName()}, or {@code null} if unsupported. */
    static JdbcDialect forProductName(String productName) {
        String name = productName == null ? "" : productName.toLowerCase(Locale.ROOT);
        for (JdbcDialect dialect : values()) {
            if (name.contains(dialect.productName.toLowerCase(Locale.ROOT))) {
                return dialect;
            }
        }
        return null;
    }

    /**
     * Whether two first checks of one resource can collide on the insert path with a duplicate key, leaving the
     * transaction usable so that the statement can run again (H2's MERGE). PostgreSQL and MariaDB resolve that
     * race inside the statement.
     */
    boolean retriesFirstInsertRace() {
        return this == H2;
    }

    /** The fence table's SQL, written once in fencing-core. */
    FenceSql fenceSql() {
        return sql;
    }

    /** The database product this dialect speaks to, as its JDBC driver names it. */
    String productName() {
        return productName;
    }

    /**
     * {@code CREATE TABLE IF NOT EXISTS} for the fence table: the statement of {@link #schemaResource()}, the script
     * shipped in the jar, with {@code table} for its default table name.
     */
    String createTableSql(String table) {
        return JdbcTable.FENCE.createTableSql(this, table);
    }

    /** The committed max_seen of a resource. Parameter: resource; returns (max_seen), no row when there is none. */
    String maxSeenSql(String table) {
        return sql.maxSeenSql(table);
    }

    /** {@link FenceSql#resourcesSql}. */
    String resourcesSql(String table, boolean after, int limit) {
        return sql.resourcesSql(table, after, limit);
    }

    /** {@link FenceSql#highestMaxSeenSql}. */
    String highestMaxSeenSql(String table) {
        return sql.highestMaxSeenSql(table);
    }

    /** The check-and-advance statement; parameters: resource, token value, holder; returns (max_seen, holder). */
    String checkSql(String table) {
        return checkSql(table, dev.fencing.rule.FenceRule.UNBOUNDED);
    }

    /**
     * The check-and-advance statement with a bound on one advance, evaluated by the same statement: on an existing
     * row, a token more than {@code maxAdvance} above max_seen leaves the row as it is (still locked), so the row
     * returned has a max_seen below the token; a first token inserts its row whatever its value. No bound for
     * {@link dev.fencing.rule.FenceRule#UNBOUNDED}.
     */
    String checkSql(String table, long maxAdvance) {
        return sql.checkSql(table, maxAdvance);
    }

    /**
     * The check-and-advance statement bounded to wait at most {@code lockTimeout} for the resource's row lock, when
     * the database can bound one statement by itself (MariaDB's {@code SET STATEMENT innodb_lock_wait_timeout=n
     * FOR}, in whole seconds rounded up); otherwise the plain statement, bounded by {@link #readLockTimeoutSql()}
     * and {@link #setLockTimeoutSql(String)} around it.
     */
    String checkSql(String table, java.time.Duration lockTimeout) {
        return checkSql(table, lockTimeout, dev.fencing.rule.FenceRule.UNBOUNDED);
    }

    /** {@link #checkSql(String, java.time.Duration)} with a bound on one advance ({@link #checkSql(String, long)}). */
    String checkSql(String table, java.time.Duration lockTimeout, long maxAdvance) {
        return sql.checkSql(table, lockTimeout, maxAdvance);
    }

    /** Locks a resource's fence row and reads max_seen. Parameter: resource; no row when there is none. */
    String lockMaxSeenSql(String table) {
        return maxSeenSql(table) + " FOR UPDATE";
    }

    /**
     * {@link #lockMaxSeenSql(String)} bounded to wait at most {@code lockTimeout} when the database bounds one
     * statement by itself (MariaDB: {@code SET STATEMENT innodb_lock_wait_timeout=n FOR}, whole seconds rounded up);
     * elsewhere the plain statement, bounded around it ({@link #readLockTimeoutSql()}).
     */
    String boundedLockMaxSeenSql(String table, java.time.Duration lockTimeout) {
        return sql.boundedByItself(lockMaxSeenSql(table), lockTimeout);
    }

    /** Sets max_seen, with no holder. Parameters: max_seen, resource. */
    String lowerSql(String table) {
        return "UPDATE " + table + " SET max_seen = ?, holder = NULL, updated_at = CURRENT_TIMESTAMP"
                + " WHERE resource = ?";
    }

    /**
     * Takes the holder off a resource whose max_seen is the given value (parameters: resource, value): after a floor
     * raise to the value it already had, its holder's token is refused too.
     */
    String clearHolderAtSql(String table) {
        return "UPDATE " + table + " SET holder = NULL, updated_at = CURRENT_TIMESTAMP"
                + " WHERE resource = ? AND max_seen = ? AND holder IS NOT NULL";
    }

    /**
     * Forgets a resource: its next token is a first one, or, in a family that was compacted, judged against the
     * family floor. Parameter: resource.
     */
    String forgetSql(String table) {
        return "DELETE FROM " + table + " WHERE resource = ?";
    }

    /**
     * A query returning the connection's current lock wait bound as text, or {@code null} when
     * {@link #checkSql(String, java.time.Duration)} bounds the statement by itself. PostgreSQL's
     * {@code lock_timeout} is set transaction-locally, H2's {@code LOCK_TIMEOUT} for the session: both are
     * restored right after the statement, so the caller's own statements keep their setting.
     */
    String readLockTimeoutSql() {
        return switch (this) {
            case POSTGRESQL -> "SELECT current_setting('lock_timeout')";
            case H2 -> "SELECT CAST(LOCK_TIMEOUT() AS VARCHAR)";
            case MARIADB -> null;
        };
    }

    /**
     * One query that sets the lock wait bound to {@code value} and returns the previous one (PostgreSQL evaluates
     * the select list in order), saving a round trip per check; {@code null} where reading and setting are two
     * statements ({@link #readLockTimeoutSql()}, then {@link #setLockTimeoutSql(String)}).
     */
    String swapLockTimeoutSql(String value) {
        return sql.swapLockTimeoutSql(value);
    }

    /** The lock wait bound to set before the check, as text {@link #setLockTimeoutSql(String)} accepts. */
    String lockTimeoutValue(java.time.Duration lockTimeout) {
        return this == POSTGRESQL ? lockTimeout.toMillis() + "ms" : Long.toString(lockTimeout.toMillis());
    }

    /**
     * Sets the connection's lock wait bound to {@code value} (from {@link #lockTimeoutValue} or, to restore it, from
     * {@link #readLockTimeoutSql()}); PostgreSQL: for the current transaction only.
     */
    String setLockTimeoutSql(String value) {
        return switch (this) {
            case POSTGRESQL -> sql.setLockTimeoutSql(value);
            case H2 -> "SET LOCK_TIMEOUT " + Long.parseLong(value.trim());
            case MARIADB -> throw new UnsupportedOperationException("MariaDB bounds the check statement itself");
        };
    }

    /**
     * Whether the lock wait bound must be restored after the check statement failed. PostgreSQL undoes a
     * transaction-local setting with the failed transaction (or savepoint), and no statement may run in it before;
     * H2's is a session setting and must be restored.
     */
    boolean restoresLockTimeoutAfterFailure() {
        return this == H2;
    }

    /**
     * A statement that brings {@code column} of a table created by an older or hand-written DDL to the definition
     * this library needs: a timestamp for {@code expires_at} and {@code updated_at}, the others as
     * {@link FenceSql#alterColumnSql} (shared with fencing-r2dbc). Shown in startup errors.
     */
    String alterColumnSql(String table, String column) {
        if (column.equals("expires_at")) {
            return switch (this) {
                case POSTGRESQL -> "ALTER TABLE " + table + " ALTER COLUMN expires_at TYPE TIMESTAMP WITH TIME ZONE";
                case MARIADB -> "ALTER TABLE " + table + " MODIFY expires_at TIMESTAMP(6) NULL";
                case H2 -> "ALTER TABLE " + table + " ALTER COLUMN expires_at SET DATA TYPE TIMESTAMP WITH TIME ZONE";
            };
        }
        if (column.equals("updated_at")) {
            return switch (this) {
                case POSTGRESQL -> "ALTER TABLE " + table + " ALTER COLUMN updated_at TYPE TIMESTAMP WITH TIME ZONE";
                case MARIADB -> "ALTER TABLE " + table + " MODIFY updated_at TIMESTAMP(6) NOT NULL";
                case H2 -> "ALTER TABLE " + table + " ALTER COLUMN updated_at SET DATA TYPE TIMESTAMP WITH TIME ZONE";
            };
        }
        return sql.alterColumnSql(table, column);
    }

    /**
     * A statement that adds a missing {@code column} to a table created by an older or hand-written DDL, or
     * {@code null} when the column cannot simply be added (the table must be recreated). Shown in startup errors.
     */
    String addColumnSql(String table, String column) {
        if (!column.equals("updated_at")) {
            return null;
        }
        return switch (this) {
            case POSTGRESQL -> "ALTER TABLE " + table
                    + " ADD COLUMN updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT CURRENT_TIMESTAMP";
            case MARIADB -> "ALTER TABLE " + table
                    + " ADD COLUMN updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)";
            case H2 -> "ALTER TABLE " + table
                    + " ADD COLUMN updated_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP NOT NULL";
        };
    }

    /** The schema script shipped in the jar, with the default table name: the one source of the fence table's DDL. */
    String schemaResource() {
        return JdbcTable.FENCE.resource(this);
    }
}
