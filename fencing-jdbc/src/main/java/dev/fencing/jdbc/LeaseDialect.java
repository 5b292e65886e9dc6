package dev.fencing.jdbc;

/**
 * The SQL of the lease table for one database; its DDL is the script shipped in the jar ({@code lease-*.sql}, read
 * by {@link JdbcTable#LEASE}). Times come from the database's clock, the one clock every instance shares; identifiers
 * are validated before they reach these templates.
 */
enum LeaseDialect {

    POSTGRESQL(
            "INSERT INTO %1$s (resource, holder, token, expires_at) VALUES (?, NULL, 0, NULL) "
                    + "ON CONFLICT (resource) DO NOTHING",
            "CURRENT_TIMESTAMP",
            "CURRENT_TIMESTAMP + ? * INTERVAL '1 millisecond'", 1, " FOR SHARE", true),

    MARIADB(
            "INSERT IGNORE INTO %1$s (resource, holder, token, expires_at) VALUES (?, NULL, 0, NULL)",
            "CURRENT_TIMESTAMP(6)",
            "CURRENT_TIMESTAMP(6) + INTERVAL ? MICROSECOND", 1000, " LOCK IN SHARE MODE", false),

    H2(
            """
            MERGE INTO %1$s t USING (VALUES (CAST(? AS VARCHAR(256)))) s (resource) ON t.resource = s.resource
            WHEN NOT MATCHED THEN INSERT (resource, holder, token, expires_at) VALUES (s.resource, NULL, 0, NULL)""",
            "CURRENT_TIMESTAMP",
            "DATEADD(MILLISECOND, ?, CURRENT_TIMESTAMP)", 1, " FOR UPDATE", false);

    private final String ensureRow;
    private final String now;
    private final String nowPlus;
    private final long unitsPerMilli;
    private final String shareLock;
    private final boolean insertsInAttempt;

    LeaseDialect(String ensureRow, String now, String nowPlus, long unitsPerMilli, String shareLock,
                 boolean insertsInAttempt) {
        this.ensureRow = ensureRow;
        this.now = now;
        this.nowPlus = nowPlus;
        this.unitsPerMilli = unitsPerMilli;
        this.shareLock = shareLock;
        this.insertsInAttempt = insertsInAttempt;
    }

    /**
     * Whether an attempt that finds no row inserts it and takes the lease in its own transaction. PostgreSQL locks
     * no gaps: a concurrent insert of the same resource waits for this one's transaction, then does nothing and
     * locks the row. InnoDB's REPEATABLE READ locks the gap a missing row would go in, and two first acquisitions that
     * each held such a gap and then inserted into it deadlock; there, and on H2, the insert runs in a transaction of
     * its own.
     */
    boolean insertsInAttempt() {
        return insertsInAttempt;
    }

    static LeaseDialect of(JdbcDialect dialect) {
        return valueOf(dialect.name());
    }

    /** Inserts the resource's row (token 0, free) unless it exists. Parameter: resource. */
    String ensureRowSql(String table) {
        return ensureRow.formatted(table);
    }

    /** Locks the row and reads (token, free-or-expired). Parameter: resource. */
    String lockRowSql(String table) {
        return "SELECT token, CASE WHEN holder IS NULL OR expires_at <= " + now + " THEN 1 ELSE 0 END, holder FROM "
                + table + " WHERE resource = ? FOR UPDATE";
    }

    /**
     * Reads (token, held now) without locking: the highest token issued for the resource and whether its lease is
     * taken and unexpired. Parameter: resource; no row when the resource was never locked.
     */
    String stateSql(String table) {
        return "SELECT token, CASE WHEN holder IS NOT NULL AND expires_at > " + now + " THEN 1 ELSE 0 END FROM "
                + table + " WHERE resource = ?";
    }

    /**
     * Takes the lease and sets the token issued (the row's token or its family's floor, whichever is higher, plus
     * one). Parameters: holder, token, ttl (see {@link #ttlParameter}), resource.
     */
    String takeSql(String table) {
        return "UPDATE " + table + " SET holder = ?, token = ?, expires_at = " + nowPlus + " WHERE resource = ?";
    }

    /**
     * Frees the lease if this holder still has it, and records when in {@code expires_at} (the lease ended now):
     * compaction measures a free row's idle time from there. Parameters: resource, holder.
     */
    String releaseSql(String table) {
        return "UPDATE " + table + " SET holder = NULL, expires_at = " + now + " WHERE resource = ? AND holder = ?";
    }

    /**
     * Reads a family floor row's token under a shared lock (a locking read sees the latest committed value at any
     * isolation level; H2 has no shared row lock and takes an exclusive one). Parameter: the floor row's key.
     */
    String readFloorSql(String table) {
        return "SELECT token FROM " + table + " WHERE resource = ?" + shareLock;
    }

    /** Raises a row's token to a value, never lowering it. Parameters: value, resource, value. */
    String raiseTokenSql(String table) {
        return "UPDATE " + table + " SET token = ? WHERE resource = ? AND token < ?";
    }

    /**
     * A row is idle when it is free and its lease ended (released, or expired) longer ago than the age: its
     * {@code expires_at} is at or before now minus the age. A free row without an end time (released before the
     * release recorded one) counts as idle. Parameter: minus the age (see {@link #ttlParameter}).
     */
    private String idle() {
        return "((holder IS NULL AND expires_at IS NULL) OR expires_at <= " + nowPlus + ")";
    }

    /**
     * Up to a limit of idle rows after a resource, in the table's order, leaving out family floor rows, without
     * locking (keyset paging: each batch starts after the last resource of the one before). Parameters: after,
     * floor-key pattern ({@code NOT LIKE}), minus the age, limit.
     */
    String idleRowsSql(String table) {
        return "SELECT resource FROM " + table + " WHERE resource > ? AND resource NOT LIKE ? AND " + idle()
                + " ORDER BY resource LIMIT ?";
    }

    /**
     * Locks one row and reads (token, still idle), the latest committed version whatever the isolation level, so a
     * row taken since it was listed is left alone. Parameters: minus the age, resource.
     */
    String lockIdleSql(String table) {
        return "SELECT token, CASE WHEN " + idle() + " THEN 1 ELSE 0 END FROM " + table
                + " WHERE resource = ? FOR UPDATE";
    }

    /** Deletes a row. Parameter: resource. */
    String deleteSql(String table) {
        return "DELETE FROM " + table + " WHERE resource = ?";
    }

    long ttlParameter(long millis) {
        return millis * unitsPerMilli;
    }
}
