package dev.fencing.jdbc;

import dev.fencing.FencingConfigurationException;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
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
}
