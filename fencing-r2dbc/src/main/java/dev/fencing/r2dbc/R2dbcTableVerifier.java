package dev.fencing.r2dbc;

import dev.fencing.FencingConfigurationException;
import dev.fencing.store.sql.FenceSql;
import dev.fencing.token.FencingToken;
import io.r2dbc.spi.ConnectionFactory;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

/**
 * The startup probe of an {@link R2dbcFenceStore}'s table, run blocking by {@link R2dbcFenceStore#verify()}: the
 * table exists with {@code resource}, {@code holder} (text of at least {@value FencingToken#MAX_PART_LENGTH}
 * characters), {@code max_seen} ({@code BIGINT}) and {@code updated_at}; on MariaDB, {@code resource} alone is its
 * primary key or a unique key; and the check statement runs on it, in a transaction rolled back (on PostgreSQL its
 * {@code ON CONFLICT (resource)} also proves the key). Every failure names the table and the script to run.
 */
final class R2dbcTableVerifier {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final DatabaseClient client;
    private final TransactionalOperator rolledBack;
    private final R2dbcDialect dialect;
    private final String table;
    private final String schema;
    private final String name;
    private final Function<FencingToken, Mono<R2dbcFenceStore.Row>> check;
    private volatile boolean verified;

    R2dbcTableVerifier(ConnectionFactory connectionFactory, DatabaseClient client, R2dbcDialect dialect, String table,
                       Function<FencingToken, Mono<R2dbcFenceStore.Row>> check) {
        this.client = client;
        this.rolledBack = TransactionalOperator.create(new R2dbcTransactionManager(connectionFactory));
        this.dialect = dialect;
        this.table = table;
        int dot = table.indexOf('.');
        String schemaPart = dot > 0 ? table.substring(0, dot) : null;
        String namePart = dot > 0 ? table.substring(dot + 1) : table;
        // PostgreSQL folds unquoted names to lower case; MariaDB keeps them (case-sensitive on Linux)
        this.schema = dialect == R2dbcDialect.POSTGRESQL && schemaPart != null
                ? schemaPart.toLowerCase(Locale.ROOT) : schemaPart;
        this.name = dialect == R2dbcDialect.POSTGRESQL ? namePart.toLowerCase(Locale.ROOT) : namePart;
        this.check = check;
    }

    /** Checks the table unless it passed before; {@code true} when this call found it good (it passed just now). */
    boolean verify() {
        if (verified) {
            return false;
        }
        Map<String, Column> columns = columns();
        if (columns.isEmpty()) {
            throw new FencingConfigurationException("Fence table '" + table + "' of R2dbcFenceStore does not exist "
                    + "(or is not visible to the connection); create it with " + dialect.script() + ", with '"
                    + R2dbcFenceStore.DEFAULT_TABLE + "' replaced by '" + table + "'");
        }
        requireColumn(columns, "resource", true);
        requireColumn(columns, "holder", true);
        requireColumn(columns, "max_seen", false);
        if (!columns.containsKey("updated_at")) {
            throw missing("updated_at");
        }
        requireDurable();
        List<String> keys = dialect == R2dbcDialect.MARIADB ? uniqueKeys() : List.of("resource");
        if (!keys.contains("resource")) {
            throw new FencingConfigurationException("Fence table '" + table + "' has no primary key or unique key on "
                    + "the whole of 'resource' alone, so two first uses of a resource could both insert a row (or, "
                    + "with a key on a prefix, resource(n), resources sharing the prefix share one row); recreate it "
                    + "with " + dialect.script());
        }
        String other = keys.stream().filter(key -> !key.equals("resource")).findFirst().orElse(null);
        if (other != null) {
            throw new FencingConfigurationException("Fence table '" + table + "' has a unique key on (" + other
                    + ") besides the one on 'resource': MariaDB's INSERT ... ON DUPLICATE KEY UPDATE updates the row "
                    + "that conflicts on any unique key, so one resource's check would advance another resource's "
                    + "row and accept a stale token; drop that key, or recreate the table with " + dialect.script());
        }
        probe();
        verified = true;
        return true;
    }

    private FencingConfigurationException missing(String column) {
        return new FencingConfigurationException("Fence table '" + table + "' has no column '" + column
                + "'; recreate it with " + dialect.script());
    }

    private void requireColumn(Map<String, Column> columns, String column, boolean text) {
        Column c = columns.get(column);
        if (c == null) {
            throw missing(column);
        }
        String problem;
        if (text) {
            boolean variable = c.type.equals("character varying") || c.type.equals("varchar")
                    || c.type.equals("text");
            problem = !variable ? "is " + c.type + ", not variable-length text of at least "
                    + FencingToken.MAX_PART_LENGTH + " characters"
                    : c.length != null && c.length < FencingToken.MAX_PART_LENGTH ? "is " + c.type + "(" + c.length
                    + "), narrower than the " + FencingToken.MAX_PART_LENGTH + " characters a resource or holder may "
                    + "have (FencingToken.MAX_PART_LENGTH)" : null;
        } else {
            problem = c.type.equals("bigint") ? null
                    : "is " + c.type + ", but tokens are 64-bit values and need BIGINT";
        }
        if (problem != null) {
            throw new FencingConfigurationException("Fence table '" + table + "' column '" + column + "' " + problem
                    + "; recreate the table with " + dialect.script() + " (or alter the column to the script's "
                    + "definition)");
        }
    }

    private Map<String, Column> columns() {
        String where = schema != null ? "table_schema = ?"
                : dialect == R2dbcDialect.POSTGRESQL ? "table_schema = current_schema()" : "table_schema = DATABASE()";
        DatabaseClient.GenericExecuteSpec spec = client.sql(dialect.nativeMarkers("SELECT column_name, data_type, "
                + "character_maximum_length FROM information_schema.columns WHERE " + where + " AND table_name = ?"));
        spec = schema != null ? spec.bind(0, schema).bind(1, name) : spec.bind(0, name);
        Map<String, Column> columns = new LinkedHashMap<>();
        try {
            spec.map((row, meta) -> {
                Number length = row.get(2, Number.class);
                return Map.entry(row.get(0, String.class).toLowerCase(Locale.ROOT),
                        new Column(row.get(1, String.class).toLowerCase(Locale.ROOT),
                                length == null ? null : length.longValue()));
            }).all().doOnNext(e -> columns.put(e.getKey(), e.getValue())).then().block(WAIT);
        } catch (RuntimeException e) {
            throw new FencingConfigurationException("Could not read the columns of fence table '" + table + "': "
                    + e.getMessage(), e);
        }
        return columns;
    }

    /**
     * The table keeps max_seen through a crash and inside the write's transaction: on PostgreSQL neither
     * {@code UNLOGGED} (emptied by crash recovery, never replicated) nor {@code TEMPORARY}; on MariaDB on InnoDB (a
     * non-transactional engine commits each check at once). Without that, a zombie's old token would land again.
     */
    private void requireDurable() {
        String what;
        String fix;
        try {
            if (dialect == R2dbcDialect.POSTGRESQL) {
                String persistence = client.sql(dialect.nativeMarkers(FenceSql.PERSISTENCE_SQL)).bind(0, table)
                        .map((row, meta) -> row.get(0, String.class)).one().block(WAIT);
                String notDurable = FenceSql.notDurable(persistence);
                if (notDurable == null) {
                    return;
                }
                what = notDurable + ", and with it every max_seen";
                fix = "u".equals(persistence) ? "ALTER TABLE " + table + " SET LOGGED"
                        : "recreate it with " + dialect.script();
            } else {
                String where = schema != null ? "table_schema = ?" : "table_schema = DATABASE()";
                DatabaseClient.GenericExecuteSpec spec = client.sql("SELECT ENGINE FROM information_schema.TABLES "
                        + "WHERE " + where + " AND table_name = ?");
                spec = schema != null ? spec.bind(0, schema).bind(1, name) : spec.bind(0, name);
                String engine = spec.map((row, meta) -> String.valueOf(row.get(0, String.class))).one().block(WAIT);
                if (engine == null || engine.equalsIgnoreCase("InnoDB")) {
                    return;
                }
                what = "uses the " + engine + " storage engine on MariaDB, which does not hold its rows in the "
                        + "transaction of the write: a check would commit at once, and a rolled-back write keep its "
                        + "token";
                fix = "ALTER TABLE " + table + " ENGINE=InnoDB (the tables your fenced methods write must be InnoDB "
                        + "too)";
            }
        } catch (RuntimeException e) {
            throw new FencingConfigurationException("Could not read how fence table '" + table + "' is stored: "
                    + e.getMessage(), e);
        }
        throw new FencingConfigurationException("Fence table '" + table + "' " + what + "; a stale token could "
                + "then write again. Fix it with: " + fix);
    }

    /**
     * MariaDB: the columns of each unique key but an auto-increment primary key (which never conflicts on insert), in
     * lower case, a column keyed on a prefix only followed by its length ({@code resource(64)}).
     */
    private List<String> uniqueKeys() {
        String where = schema != null ? "s.table_schema = ?" : "s.table_schema = DATABASE()";
        DatabaseClient.GenericExecuteSpec spec = client.sql("SELECT GROUP_CONCAT(LOWER(s.column_name), "
                + "IF(s.sub_part IS NULL, '', CONCAT('(', s.sub_part, ')')) ORDER BY s.seq_in_index) "
                + "FROM information_schema.statistics s WHERE " + where + " AND s.table_name = ? "
                + "AND s.non_unique = 0 AND NOT EXISTS (SELECT 1 FROM information_schema.columns c WHERE "
                + "c.table_schema = s.table_schema AND c.table_name = s.table_name AND c.column_name = s.column_name "
                + "AND c.extra LIKE '%auto_increment%') GROUP BY s.index_name");
        spec = schema != null ? spec.bind(0, schema).bind(1, name) : spec.bind(0, name);
        try {
            List<String> keys = spec.map((row, meta) -> row.get(0, String.class)).all().collectList().block(WAIT);
            return keys == null ? List.of() : keys;
        } catch (RuntimeException e) {
            throw new FencingConfigurationException("Could not read the keys of fence table '" + table + "': "
                    + e.getMessage(), e);
        }
    }

    /**
     * Runs the check statement on a probe resource and on the same name with a composed {@code \u00c5}, then on names
     * that differ from them only in case, in an accent, in a trailing space, in a zero-width space or in the
     * composition of that character, each with a holder of its own, in a transaction that is rolled back: each must
     * get a row of its own (MariaDB's default collation makes them one row, and one resource's max_seen another's).
     */
    private void probe() {
        String resource = "fencing-probe-Ab-" + UUID.randomUUID();
        FencingToken token = new FencingToken(resource, 1, "probe");
        Map<String, String> variants = new LinkedHashMap<>();
        String otherCase = resource.replace("Ab", "aB");
        variants.put(otherCase, "compares case-insensitively ('" + resource + "' and '" + otherCase
                + "' are one row)");
        String accented = resource.replace("Ab", "\u00c4b");
        variants.put(accented, "compares accent-insensitively ('" + resource + "' and '" + accented
                + "' are one row)");
        variants.put(resource + " ", "ignores trailing spaces (PAD SPACE: '" + resource + "' and '" + resource
                + " ' are one row)");
        // UCA and ICU collations that are case- and accent-sensitive and no-pad pass the three checks above, yet
        // compare canonically equivalent spellings as one and ignore zero-width characters
        String composed = resource.replace("Ab", "\u00c5b");
        variants.put(resource.replace("Ab", "A\u030ab"), "compares canonically equivalent spellings as one ('"
                + composed + "' with a composed \\u00c5 and the same name typed as A and a combining ring above "
                + "\\u030a are one row)");
        String invisible = resource.replace("Ab", "A\u200bb");
        variants.put(invisible, "ignores invisible characters ('" + resource + "' and '"
                + FencingToken.printable(invisible) + "' are one row)");
        try {
            String[] merged = new String[1];
            R2dbcFenceStore.Row row = rolledBack.execute(status -> {
                status.setRollbackOnly();
                // the composed name is written with the probe's holder too: its decomposed spelling must not find it
                Mono<R2dbcFenceStore.Row> first = check.apply(token)
                        .flatMap(r -> check.apply(new FencingToken(composed, 1, "probe")).thenReturn(r));
                Mono<Void> others = reactor.core.publisher.Flux.fromIterable(variants.entrySet())
                        .concatMap(v -> check.apply(new FencingToken(v.getKey(), 1, "probe-variant"))
                                .doOnNext(r -> {
                                    if (!"probe-variant".equals(r.holder()) && merged[0] == null) {
                                        merged[0] = v.getValue();
                                    }
                                }))
                        .then();
                return first.flatMap(r -> others.thenReturn(r));
            }).single().block(WAIT);
            if (row == null || row.maxSeen() != 1 || !"probe".equals(row.holder())) {
                throw new FencingConfigurationException("Fence table '" + table + "' did not behave as a fence: the "
                        + "check of a new resource with token 1 returned " + row + "; recreate it with "
                        + dialect.script());
            }
            if (merged[0] != null) {
                // the fix operations.md shows, as the JDBC store's message has it: alter, or recreate
                throw new FencingConfigurationException("Fence table '" + table + "' column 'resource' " + merged[0]
                        + ": two resources would share one max_seen; give it an exact (binary, no-pad) comparison: "
                        + dialect.sql().alterColumnSql(table, "resource") + " (and the same for 'holder'), or "
                        + "recreate the table with " + dialect.script());
            }
        } catch (FencingConfigurationException e) {
            throw e;
        } catch (RuntimeException e) {
            String denied = denied(e);
            if (denied != null) {
                throw new FencingConfigurationException("Fence table '" + table + "' exists but cannot be written by "
                        + "the application's connections (" + e.getMessage() + "): " + denied, e);
            }
            throw new FencingConfigurationException("The fence check statement failed on table '" + table + "' ("
                    + e.getMessage() + "); recreate the table with " + dialect.script(), e);
        }
    }

    /**
     * The fix when the probe failed for lack of a privilege or on a read-only connection (not a table to recreate),
     * by the R2DBC exception's SQL state and MariaDB's error codes; {@code null} otherwise.
     */
    private String denied(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof io.r2dbc.spi.R2dbcException r2dbc) {
                String fix = FenceSql.deniedFix(r2dbc.getSqlState(), r2dbc.getErrorCode(), table);
                return fix != null || !(r2dbc instanceof io.r2dbc.spi.R2dbcPermissionDeniedException) ? fix
                        : FenceSql.deniedFix("42501", 0, table);
            }
        }
        return null;
    }

    private record Column(String type, Long length) {
    }
}
