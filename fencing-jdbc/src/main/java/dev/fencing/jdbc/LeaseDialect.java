package dev.fencing.jdbc;

/**
 * The SQL of the lease table for one database. Times come from the database's clock, the one clock every instance
 * shares; identifiers are validated before they reach these templates.
 */
enum LeaseDialect {

    POSTGRESQL("""
            CREATE TABLE IF NOT EXISTS %1$s (
                resource   VARCHAR(256) NOT NULL PRIMARY KEY,
                holder     VARCHAR(256),
                token      BIGINT       NOT NULL,
                expires_at TIMESTAMP WITH TIME ZONE
            )""",
            "INSERT INTO %1$s (resource, holder, token, expires_at) VALUES (?, NULL, 0, NULL) ON CONFLICT (resource) DO NOTHING",
            "CURRENT_TIMESTAMP",
            "CURRENT_TIMESTAMP + ? * INTERVAL '1 millisecond'", 1),

    MARIADB("""
            CREATE TABLE IF NOT EXISTS %1$s (
                resource   VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
                holder     VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
                token      BIGINT       NOT NULL,
                expires_at TIMESTAMP(6) NULL
            )""",
            "INSERT IGNORE INTO %1$s (resource, holder, token, expires_at) VALUES (?, NULL, 0, NULL)",
            "CURRENT_TIMESTAMP(6)",
            "CURRENT_TIMESTAMP(6) + INTERVAL ? MICROSECOND", 1000),

    H2("""
            CREATE TABLE IF NOT EXISTS %1$s (
                resource   VARCHAR(256) NOT NULL PRIMARY KEY,
                holder     VARCHAR(256),
                token      BIGINT       NOT NULL,
                expires_at TIMESTAMP WITH TIME ZONE
            )""",
            """
            MERGE INTO %1$s t USING (VALUES (CAST(? AS VARCHAR(256)))) s (resource) ON t.resource = s.resource
            WHEN NOT MATCHED THEN INSERT (resource, holder, token, expires_at) VALUES (s.resource, NULL, 0, NULL)""",
            "CURRENT_TIMESTAMP",
            "DATEADD(MILLISECOND, ?, CURRENT_TIMESTAMP)", 1);

    private final String createTable;
    private final String ensureRow;
    private final String now;
    private final String nowPlus;
    private final long unitsPerMilli;

    LeaseDialect(String createTable, String ensureRow, String now, String nowPlus, long unitsPerMilli) {
        this.createTable = createTable;
        this.ensureRow = ensureRow;
        this.now = now;
        this.nowPlus = nowPlus;
        this.unitsPerMilli = unitsPerMilli;
    }

    static LeaseDialect of(FenceDialect dialect) {
        return valueOf(dialect.name());
    }

    String createTableSql(String table) {
        return createTable.formatted(table);
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
