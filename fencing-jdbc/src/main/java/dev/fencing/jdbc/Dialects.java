package dev.fencing.jdbc;

import dev.fencing.FencingConfigurationException;
import dev.fencing.token.FencingToken;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.Types;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/** Detects the database behind a data source and checks it against a configured dialect. */
final class Dialects {

    private static final Pattern TABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

    private Dialects() {
    }

    /**
     * Only plain identifiers reach SQL text: letters, digits and underscores, optionally schema-qualified.
     *
     * @throws FencingConfigurationException naming the component and the rejected name
     */
    static String requireTableName(String who, String table) {
        if (table == null || !TABLE.matcher(table).matches()) {
            throw new FencingConfigurationException(who + " table name '" + table + "' is invalid: use "
                    + "letters, digits and underscores, optionally schema-qualified (schema.table), at most 63 each");
        }
        return table;
    }

    /**
     * @param configured the dialect the user set, or {@code null} to detect
     * @param who        the component asking, for messages
     * @throws FencingConfigurationException when the database is unreachable, unsupported, or not {@code configured}
     */
    static FenceDialect detect(DataSource dataSource, FenceDialect configured, String who) {
        String product;
        try {
            product = new JdbcTemplate(dataSource).execute((Connection c) -> {
                DatabaseMetaData meta = c.getMetaData();
                return meta.getDatabaseProductName() + " " + meta.getDatabaseProductVersion();
            });
        } catch (DataAccessException e) {
            throw new FencingConfigurationException(who + " cannot connect to its data source: " + e.getMessage(), e);
        }
        FenceDialect detected = FenceDialect.forProductName(product);
        if (configured == null) {
            if (detected == null) {
                throw new FencingConfigurationException(who + " does not support database '" + product
                        + "'; supported: PostgreSQL, MariaDB, H2");
            }
            return detected;
        }
        if (detected != configured) {
            throw new FencingConfigurationException(who + " dialect " + configured + " does not match the database, "
                    + "which is '" + product + "'; set dialect(" + (detected == null ? "..." : detected)
                    + ") or leave the dialect unset to detect it");
        }
        return configured;
    }

    /** What a column of a fence or lease table must be able to hold. */
    enum ColumnNeed {
        /** A 64-bit integer: tokens are {@code long}s (a ZooKeeper czxid passes 2^32 after one leader election). */
        BIGINT,
        /** Variable-length text of at least {@link FencingToken#MAX_PART_LENGTH} characters. */
        TEXT
    }

    /**
     * Reads the table's columns from the connection's metadata and checks each needed one's type and width, so a
     * table that would fail at run time (a 49-character resource in {@code VARCHAR(32)}, a 64-bit token in an
     * {@code INTEGER}) fails at startup instead. Finds nothing to check when the table does not exist (the probe
     * reports that).
     *
     * @param what  how messages name the table, e.g. {@code "Fence table"}
     * @param fix   where to find the DDL, e.g. {@code "classpath:dev/fencing/jdbc/schema-h2.sql"}
     * @throws FencingConfigurationException naming the column, what it is, what it must be, and a statement to fix it
     */
    static void requireColumns(JdbcTemplate jdbc, FenceDialect dialect, String what, String table, String fix,
                               Map<String, ColumnNeed> needs) {
        Map<String, Column> columns = jdbc.execute((Connection c) -> {
            DatabaseMetaData meta = c.getMetaData();
            String catalog = c.getCatalog();
            String schema = dialect == FenceDialect.MARIADB ? null : c.getSchema();
            String name = table;
            int dot = table.indexOf('.');
            if (dot > 0) {
                name = table.substring(dot + 1);
                if (dialect == FenceDialect.MARIADB) {
                    catalog = table.substring(0, dot);
                } else {
                    schema = table.substring(0, dot);
                }
            }
            for (String[] candidate : new String[][] {{schema, name},
                    {lower(schema), name.toLowerCase(Locale.ROOT)}, {upper(schema), name.toUpperCase(Locale.ROOT)}}) {
                Map<String, Column> found = new LinkedHashMap<>();
                try (ResultSet rs = meta.getColumns(catalog, candidate[0], candidate[1], null)) {
                    while (rs.next()) {
                        String column = rs.getString("COLUMN_NAME").toLowerCase(Locale.ROOT);
                        found.putIfAbsent(column, new Column(rs.getInt("DATA_TYPE"), rs.getString("TYPE_NAME"),
                                rs.getLong("COLUMN_SIZE")));
                    }
                }
                if (!found.isEmpty()) {
                    return found;
                }
            }
            return Map.<String, Column>of();
        });
        if (columns == null || columns.isEmpty()) {
            return;
        }
        for (Map.Entry<String, ColumnNeed> need : needs.entrySet()) {
            String name = need.getKey();
            Column column = columns.get(name);
            if (column == null) {
                throw new FencingConfigurationException(what + " '" + table + "' has no column '" + name
                        + "'; recreate it with " + fix);
            }
            String problem = switch (need.getValue()) {
                case BIGINT -> column.type == Types.BIGINT ? null
                        : "is " + column.describe() + ", but tokens are 64-bit values and need BIGINT";
                case TEXT -> switch (column.type) {
                    case Types.VARCHAR, Types.NVARCHAR, Types.LONGVARCHAR, Types.LONGNVARCHAR ->
                            column.size >= FencingToken.MAX_PART_LENGTH ? null : "is " + column.describe()
                                    + ", narrower than the " + FencingToken.MAX_PART_LENGTH
                                    + " characters a resource or holder may have (FencingToken.MAX_PART_LENGTH)";
                    case Types.CHAR, Types.NCHAR -> "is " + column.describe() + ": fixed-length text is padded "
                            + "with spaces, so 'x' and 'x ' would be one value; it must be VARCHAR("
                            + FencingToken.MAX_PART_LENGTH + ")";
                    default -> "is " + column.describe() + ", not variable-length text of at least "
                            + FencingToken.MAX_PART_LENGTH + " characters";
                };
            };
            if (problem != null) {
                throw new FencingConfigurationException(what + " '" + table + "' column '" + name + "' " + problem
                        + "; fix it with: " + dialect.alterColumnSql(table, name) + " (or recreate the table with "
                        + fix + ")");
            }
        }
    }

    private static String lower(String s) {
        return s == null ? null : s.toLowerCase(Locale.ROOT);
    }

    private static String upper(String s) {
        return s == null ? null : s.toUpperCase(Locale.ROOT);
    }

    private record Column(int type, String typeName, long size) {
        String describe() {
            return type == Types.BIGINT || type == Types.INTEGER || type == Types.SMALLINT
                    || type == Types.TINYINT ? typeName.toUpperCase(Locale.ROOT)
                    : typeName.toUpperCase(Locale.ROOT) + "(" + size + ")";
        }
    }
}
