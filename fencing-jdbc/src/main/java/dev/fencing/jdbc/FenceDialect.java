package dev.fencing.jdbc;

import java.util.Locale;

/**
 * The SQL of the fence table for one database: its DDL, and the single statement that checks a token against
 * max_seen, advances it when the rule accepts, takes the row lock that serializes fenced writes to the resource
 * until commit, and returns the row as it now stands. Identifiers are validated before they reach these templates.
 */
public enum FenceDialect {

    /** PostgreSQL 9.5+: {@code INSERT ... ON CONFLICT DO UPDATE ... RETURNING}. */
    POSTGRESQL("PostgreSQL",
            """
            CREATE TABLE IF NOT EXISTS %1$s (
                resource   VARCHAR(256) NOT NULL PRIMARY KEY,
                max_seen   BIGINT       NOT NULL,
                holder     VARCHAR(256),
                updated_at TIMESTAMP WITH TIME ZONE NOT NULL
            )""",
            """
            INSERT INTO %1$s AS f (resource, max_seen, holder, updated_at)
            VALUES (?, ?, ?, CURRENT_TIMESTAMP)
            ON CONFLICT (resource) DO UPDATE SET
                updated_at = CASE WHEN f.max_seen < EXCLUDED.max_seen
                                    OR (f.max_seen = EXCLUDED.max_seen AND f.holder = EXCLUDED.holder)
                                  THEN EXCLUDED.updated_at ELSE f.updated_at END,
                holder     = CASE WHEN f.max_seen < EXCLUDED.max_seen THEN EXCLUDED.holder ELSE f.holder END,
                max_seen   = GREATEST(f.max_seen, EXCLUDED.max_seen)
            RETURNING max_seen, holder"""),

    /**
     * MariaDB 10.5+: {@code INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING}. Assignments run left to right and
     * see the columns already assigned, so the conditions come before the columns they read are changed.
     */
    MARIADB("MariaDB",
            """
            CREATE TABLE IF NOT EXISTS %1$s (
                resource   VARCHAR(256) NOT NULL PRIMARY KEY,
                max_seen   BIGINT       NOT NULL,
                holder     VARCHAR(256),
                updated_at TIMESTAMP(6) NOT NULL
            )""",
            """
            INSERT INTO %1$s (resource, max_seen, holder, updated_at)
            VALUES (?, ?, ?, CURRENT_TIMESTAMP(6))
            ON DUPLICATE KEY UPDATE
                updated_at = IF(max_seen < VALUES(max_seen)
                                OR (max_seen = VALUES(max_seen) AND holder = VALUES(holder)),
                                VALUES(updated_at), updated_at),
                holder     = IF(max_seen < VALUES(max_seen), VALUES(holder), holder),
                max_seen   = GREATEST(max_seen, VALUES(max_seen))
            RETURNING max_seen, holder"""),

    /** H2 2.x: {@code MERGE ... USING} read back through {@code FINAL TABLE}. */
    H2("H2",
            """
            CREATE TABLE IF NOT EXISTS %1$s (
                resource   VARCHAR(256) NOT NULL PRIMARY KEY,
                max_seen   BIGINT       NOT NULL,
                holder     VARCHAR(256),
                updated_at TIMESTAMP WITH TIME ZONE NOT NULL
            )""",
            """
            SELECT max_seen, holder FROM FINAL TABLE (
                MERGE INTO %1$s f
                USING (VALUES (CAST(? AS VARCHAR(256)), CAST(? AS BIGINT), CAST(? AS VARCHAR(256))))
                      s (resource, max_seen, holder)
                ON f.resource = s.resource
                WHEN MATCHED THEN UPDATE SET
                    updated_at = CASE WHEN f.max_seen < s.max_seen
                                        OR (f.max_seen = s.max_seen AND f.holder = s.holder)
                                      THEN CURRENT_TIMESTAMP ELSE f.updated_at END,
                    holder     = CASE WHEN f.max_seen < s.max_seen THEN s.holder ELSE f.holder END,
                    max_seen   = GREATEST(f.max_seen, s.max_seen)
                WHEN NOT MATCHED THEN INSERT (resource, max_seen, holder, updated_at)
                    VALUES (s.resource, s.max_seen, s.holder, CURRENT_TIMESTAMP)
            )""");

    private final String productName;
    private final String createTable;
    private final String check;

    FenceDialect(String productName, String createTable, String check) {
        this.productName = productName;
        this.createTable = createTable;
        this.check = check;
    }

    /** The dialect for a JDBC {@code DatabaseMetaData.getDatabaseProductName()}, or {@code null} if unsupported. */
    public static FenceDialect forProductName(String productName) {
        String name = productName == null ? "" : productName.toLowerCase(Locale.ROOT);
        for (FenceDialect dialect : values()) {
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
    public boolean retriesFirstInsertRace() {
        return this == H2;
    }

    /** The database product this dialect speaks to, as its JDBC driver names it. */
    public String productName() {
        return productName;
    }

    /** {@code CREATE TABLE IF NOT EXISTS} for the fence table. */
    public String createTableSql(String table) {
        return createTable.formatted(table);
    }

    /** The check-and-advance statement; parameters: resource, token value, holder; returns (max_seen, holder). */
    public String checkSql(String table) {
        return check.formatted(table);
    }

    /** The schema script shipped in the jar, with the default table name. */
    public String schemaResource() {
        return "dev/fencing/jdbc/schema-" + name().toLowerCase(Locale.ROOT) + ".sql";
    }
}
