package dev.fencing.jdbc;

import dev.fencing.FencingConfigurationException;
import dev.fencing.store.sql.FenceSql;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The two tables of this module, described once: the fence table of {@link JdbcFenceStore} and the lease table of
 * {@link JdbcTokenIssuer}. Each names its columns and what they must hold (for {@link TableVerifier}), its default
 * name, and its DDL per dialect, which is the script shipped in the jar ({@code schema-*.sql}, {@code lease-*.sql}):
 * the one source of the schema, read once and given the configured table name.
 */
enum JdbcTable {

    FENCE("JdbcFenceStore", "store", "Fence table", JdbcFenceStore.DEFAULT_TABLE, "schema", "max_seen",
            Map.of("resource", ColumnNeed.TEXT, "max_seen", ColumnNeed.BIGINT, "holder", ColumnNeed.TEXT,
                    "updated_at", ColumnNeed.TIMESTAMP)),

    LEASE("JdbcTokenIssuer", "issuer", "Lease table", JdbcTokenIssuer.DEFAULT_TABLE, "lease", "lease",
            Map.of("resource", ColumnNeed.TEXT, "holder", ColumnNeed.TEXT, "token", ColumnNeed.BIGINT,
                    "expires_at", ColumnNeed.INSTANT));

    /** What a column must be able to hold. */
    enum ColumnNeed {
        /** A 64-bit integer: tokens are {@code long}s (a ZooKeeper czxid passes 2^32 after one leader election). */
        BIGINT,
        /** Variable-length text of at least {@link dev.fencing.token.FencingToken#MAX_PART_LENGTH} characters. */
        TEXT,
        /**
         * A point in time from the database's clock: when the row last advanced, which compaction reads to find idle
         * rows ({@link JdbcFenceAdmin#compact}).
         */
        TIMESTAMP,
        /**
         * An instant every session reads alike: when a lease expires, which each instance's session compares with
         * the database's clock. A timestamp without a time zone is read in each session's zone (PostgreSQL, H2;
         * MariaDB's DATETIME), so instances in two zones would both hold one lock.
         */
        INSTANT
    }

    private static final String CREATE = "CREATE TABLE IF NOT EXISTS ";

    private static final Pattern NAME = Pattern.compile(
            "[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

    private final String owner;
    private final String ownerNoun;
    private final String what;
    private final String defaultName;
    private final String scriptPrefix;
    private final String sharedState;
    private final Map<String, ColumnNeed> columns;
    private final Map<JdbcDialect, String> ddl = new EnumMap<>(JdbcDialect.class);

    JdbcTable(String owner, String ownerNoun, String what, String defaultName, String scriptPrefix,
              String sharedState, Map<String, ColumnNeed> columns) {
        this.owner = owner;
        this.ownerNoun = ownerNoun;
        this.what = what;
        this.defaultName = defaultName;
        this.scriptPrefix = scriptPrefix;
        this.sharedState = sharedState;
        this.columns = new LinkedHashMap<>(columns);
    }

    /** The class that owns a table of this kind, for messages: {@code JdbcFenceStore}. */
    String owner() {
        return owner;
    }

    /** How messages name the owner after "build the": {@code store}. */
    String ownerNoun() {
        return ownerNoun;
    }

    /** The table name when none is configured. */
    String defaultName() {
        return defaultName;
    }

    /** How messages name the table: {@code Fence table}. */
    String what() {
        return what;
    }

    /** What two resources merged into one row would share, for messages: {@code max_seen}, {@code lease}. */
    String sharedState() {
        return sharedState;
    }

    /** The columns {@link TableVerifier} checks, and what each must hold. */
    Map<String, ColumnNeed> columns() {
        return columns;
    }

    /** The script shipped in the jar for {@code dialect}, as a class path resource. */
    String resource(JdbcDialect dialect) {
        return "dev/fencing/jdbc/" + scriptPrefix + "-" + dialect.name().toLowerCase(Locale.ROOT) + ".sql";
    }

    /** The script, as messages name it: {@code classpath:dev/fencing/jdbc/schema-h2.sql}. */
    String script(JdbcDialect dialect) {
        return "classpath:" + resource(dialect);
    }

    /**
     * Only plain identifiers reach SQL text: letters, digits and underscores, optionally schema-qualified.
     *
     * @throws FencingConfigurationException naming the owner and the rejected name
     */
    String requireName(String table) {
        if (table == null || !NAME.matcher(table).matches()) {
            throw new FencingConfigurationException(owner + " table name '" + table + "' is invalid: use "
                    + "letters, digits and underscores, optionally schema-qualified (schema.table), at most 63 each");
        }
        return table;
    }

    /**
     * {@code CREATE TABLE IF NOT EXISTS} for a table of this kind named {@code table}: the shipped script's
     * statement, its default table name replaced.
     */
    String createTableSql(JdbcDialect dialect, String table) {
        String columnsPart;
        synchronized (ddl) {
            columnsPart = ddl.computeIfAbsent(dialect, this::load);
        }
        return CREATE + requireName(table) + columnsPart;
    }

    /**
     * The script's one statement, without its comment lines and the closing semicolon, from the opening parenthesis
     * on (what follows the table name).
     */
    private String load(JdbcDialect dialect) {
        String createDefault = CREATE + defaultName + " (";
        String sql = FenceSql.scriptStatement(JdbcTable.class.getClassLoader(), resource(dialect), createDefault);
        return sql.substring(createDefault.length() - 2);
    }
}
