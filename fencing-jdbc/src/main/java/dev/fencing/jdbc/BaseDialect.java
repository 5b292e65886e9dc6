package dev.fencing.jdbc;

/**
 * The SQL of the issuer base table of {@link JdbcIssuerBase} for one database; its DDL is the script shipped in the
 * jar ({@code issuer-base-*.sql}). The table name is validated before it reaches these templates.
 */
enum BaseDialect {

    POSTGRESQL("INSERT INTO %1$s (name, base, created_at) VALUES (?, ?, CURRENT_TIMESTAMP) "
            + "ON CONFLICT (name) DO NOTHING"),

    MARIADB("INSERT INTO %1$s (name, base, created_at) VALUES (?, ?, CURRENT_TIMESTAMP(6)) "
            + "ON DUPLICATE KEY UPDATE name = name"),

    H2("""
            MERGE INTO %1$s t USING (VALUES (CAST(? AS VARCHAR(128)), CAST(? AS BIGINT))) s (name, base) \
            ON t.name = s.name
            WHEN NOT MATCHED THEN INSERT (name, base, created_at) VALUES (s.name, s.base, CURRENT_TIMESTAMP)""");

    /** The default table name, as the shipped scripts spell it. */
    static final String DEFAULT_TABLE = "fencing_issuer_base";

    private final String insertIfAbsent;

    BaseDialect(String insertIfAbsent) {
        this.insertIfAbsent = insertIfAbsent;
    }

    static BaseDialect of(JdbcDialect dialect) {
        return valueOf(dialect.name());
    }

    /** Stores a base unless the name has one; one statement, atomic. Parameters: name, base. */
    String insertIfAbsentSql(String table) {
        return insertIfAbsent.formatted(table);
    }

    /** Reads the stored bases of a name (one row, or none; more only in a table without its key). Parameter: name. */
    String selectSql(String table) {
        return "SELECT base FROM " + table + " WHERE name = ?";
    }

    /** The class path resource of the shipped script. */
    String script() {
        return "dev/fencing/jdbc/issuer-base-" + name().toLowerCase(java.util.Locale.ROOT) + ".sql";
    }
}
