package dev.fencing.jdbc;

import dev.fencing.FencingConfigurationException;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The one builder path of {@link JdbcFenceStore} and {@link JdbcTokenIssuer}: the data source, the table name, the
 * dialect and whether to create the table; the one place that checks the name, detects the dialect and makes the
 * {@link TableVerifier} of what is built. Package-private: its public methods are part of each public builder.
 *
 * @param <B> the builder
 */
abstract class AbstractTableBuilder<B extends AbstractTableBuilder<B>> {

    private final JdbcTable kind;
    private final DataSource dataSource;
    private JdbcDialect dialect;
    private String table;
    private boolean createTable;

    AbstractTableBuilder(JdbcTable kind, DataSource dataSource) {
        this.kind = kind;
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.table = kind.defaultName();
    }

    /** Forces the dialect; startup fails if the database is another product. Detected when not set. */
    public B dialect(JdbcDialect dialect) {
        this.dialect = Objects.requireNonNull(dialect, "dialect");
        return self();
    }

    /** The table name, optionally schema-qualified: letters, digits and underscores only. */
    public B table(String table) {
        this.table = table;
        return self();
    }

    /**
     * Whether {@code verify()} creates the table when it does not exist (default: no, create it with the script
     * shipped in the jar, or with your migrations).
     */
    public B createTableIfMissing(boolean createTable) {
        this.createTable = createTable;
        return self();
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    DataSource dataSource() {
        return dataSource;
    }

    /** The configured dialect, or after {@link #resolve()} the one detected; {@code null} before when unset. */
    JdbcDialect configuredDialect() {
        return dialect;
    }

    String tableName() {
        return table;
    }

    /**
     * Checks the table name, then detects the dialect from the database, or checks the configured one against it.
     *
     * @throws FencingConfigurationException when the table name is invalid, or the database is unreachable,
     *                                       unsupported, or not the configured dialect
     */
    void resolve() {
        checkName();
        dialect = detect();
    }

    /** Checks the table name only, for a build that must not connect; the dialect must then be configured. */
    void checkName() {
        kind.requireName(table);
    }

    /** The verifier of the table; {@code probe} writes and reads probe rows with the built object's statements. */
    TableVerifier verifier(JdbcTemplate jdbc, PlatformTransactionManager tm, TableVerifier.Probe probe,
                           Supplier<String> verifiedDetail) {
        return new TableVerifier(kind, dialect, table, createTable, jdbc, tm, probe, verifiedDetail);
    }

    private JdbcDialect detect() {
        String who = kind.owner();
        String product;
        try {
            product = new JdbcTemplate(dataSource).execute((Connection c) -> {
                DatabaseMetaData meta = c.getMetaData();
                return meta.getDatabaseProductName() + " " + meta.getDatabaseProductVersion();
            });
        } catch (DataAccessException e) {
            throw new FencingConfigurationException(who + " cannot connect to its data source: " + e.getMessage(), e);
        }
        JdbcDialect detected = JdbcDialect.forProductName(product);
        if (dialect == null) {
            if (detected == null) {
                throw new FencingConfigurationException(who + " does not support database '" + product
                        + "'; supported: PostgreSQL, MariaDB, H2");
            }
            return detected;
        }
        if (detected != dialect) {
            throw new FencingConfigurationException(who + " dialect " + dialect + " does not match the database, "
                    + "which is '" + product + "'; set dialect(" + (detected == null ? "..." : detected)
                    + ") or leave the dialect unset to detect it");
        }
        return dialect;
    }
}
