package dev.fencing.jdbc;

/**
 * The SQL of the lease table for one database; its DDL is the script shipped in the jar ({@code lease-*.sql}, read
 * by {@link JdbcTable#LEASE}). Times come from the database's clock, the one clock every instance shares; identifiers
 * are validated before they reach these templates.
 */
enum LeaseDialect {

    POSTGRESQL(
            "INSERT INTO %1$s (resource, holder, token, expires_at) VALUES (?, NULL, 0, NULL) ON CONFLICT (resource) DO NOTHING",
            "CURRENT_TIMESTAMP",
            "CURRENT_TIMESTAMP + ? * INTERVAL '1 millisecond'", 1),

    MARIADB(
            "INSERT IGNORE INTO %1$s (resource, holder, token, expires_at) VALUES (?, NULL, 0, NULL)",
            "CURRENT_TIMESTAMP(6)",
            "CURRENT_TIMESTAMP(6) + INTERVAL ? MICROSECOND", 1000),

    H2(
            """
            MERGE INTO %1$s t USING (VALUES (CAST(? AS VARCHAR(256)))) s (resource) ON t.resource = s.resource
            WHEN NOT MATCHED THEN INSERT (resource, holder, token, expires_at) VALUES (s.resource, NULL, 0, NULL)""",
            "CURRENT_TIMESTAMP",
            "DATEADD(MILLISECOND, ?, CURRENT_TIMESTAMP)", 1);

    private final String ensureRow;
    private final String now;
    private final String nowPlus;
    private final long unitsPerMilli;

    LeaseDialect(String ensureRow, String now, String nowPlus, long unitsPerMilli) {
        this.ensureRow = ensureRow;
        this.now = now;
        this.nowPlus = nowPlus;
        this.unitsPerMilli = unitsPerMilli;
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

    /** Takes the lease and advances the token. Parameters: holder, ttl (see {@link #ttlParameter}), resource. */
    String takeSql(String table) {
        return "UPDATE " + table + " SET holder = ?, token = token + 1, expires_at = " + nowPlus + " WHERE resource = ?";
    }

    /** Frees the lease if this holder still has it. Parameters: resource, holder. */
    String releaseSql(String table) {
        return "UPDATE " + table + " SET holder = NULL, expires_at = NULL WHERE resource = ? AND holder = ?";
    }

    long ttlParameter(long millis) {
        return millis * unitsPerMilli;
    }
}
