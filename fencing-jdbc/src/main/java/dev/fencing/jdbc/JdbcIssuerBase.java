package dev.fencing.jdbc;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.IssuerBase;
import dev.fencing.store.sql.FenceSql;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * The bases of {@link dev.fencing.issuer.OffsetTokenIssuer}s in a database table the user creates with the script
 * shipped in the jar ({@code classpath:dev/fencing/jdbc/issuer-base-postgresql.sql}, {@code -mariadb}, {@code -h2}):
 * one row per migration name, inserted once by one atomic statement and never updated, so every instance reads the
 * same base. The table is checked when this object is built; a missing or wrong table fails with the script to run.
 *
 * <pre>{@code
 * IssuerBase bases = new JdbcIssuerBase(dataSource, "fencing_issuer_base");
 * TokenIssuer issuer = OffsetTokenIssuer.establish(zooKeeperIssuer, bases, "zk-2026", 1_000_000, fenceAdmin);
 * }</pre>
 */
public final class JdbcIssuerBase implements IssuerBase {

    /** The table name when none is given: {@code fencing_issuer_base}. */
    public static final String DEFAULT_TABLE = BaseDialect.DEFAULT_TABLE;

    private static final Pattern NAME = Pattern.compile(
            "[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

    private final JdbcTemplate jdbc;
    private final String table;
    private final BaseDialect dialect;

    /**
     * Uses {@code table} on {@code dataSource}, detecting the database and checking the table now.
     *
     * @throws FencingConfigurationException when the table name is invalid, the database is unreachable or not
     *                                       supported, or the table is missing or lacks its columns
     */
    public JdbcIssuerBase(DataSource dataSource, String table) {
        this(dataSource, table, false);
    }

    /**
     * As {@link #JdbcIssuerBase(DataSource, String)}, creating the table first with the shipped script's statement
     * when {@code createTableIfMissing} (for tests and demos; production creates it with its migrations).
     */
    public JdbcIssuerBase(DataSource dataSource, String table, boolean createTableIfMissing) {
        this.jdbc = new JdbcTemplate(Objects.requireNonNull(dataSource, "dataSource"));
        if (table == null || !NAME.matcher(table).matches()) {
            throw new FencingConfigurationException("JdbcIssuerBase table name '" + table + "' is invalid: use "
                    + "letters, digits and underscores, optionally schema-qualified (schema.table), at most 63 each");
        }
        this.table = table;
        this.dialect = BaseDialect.of(detect(jdbc));
        if (createTableIfMissing) {
            String statement = FenceSql.scriptStatement(JdbcIssuerBase.class.getClassLoader(), dialect.script(),
                    "CREATE TABLE IF NOT EXISTS " + DEFAULT_TABLE + " (");
            jdbc.execute(statement.replaceFirst(DEFAULT_TABLE, table));
        }
        verify();
    }

    private static JdbcDialect detect(JdbcTemplate jdbc) {
        String product;
        try {
            product = jdbc.execute((Connection c) -> {
                DatabaseMetaData meta = c.getMetaData();
                return meta.getDatabaseProductName() + " " + meta.getDatabaseProductVersion();
            });
        } catch (DataAccessException e) {
            throw new FencingConfigurationException("JdbcIssuerBase cannot connect to its data source: "
                    + e.getMessage(), e);
        }
        JdbcDialect dialect = JdbcDialect.forProductName(product);
        if (dialect == null) {
            throw new FencingConfigurationException("JdbcIssuerBase does not support database '" + product
                    + "'; supported: PostgreSQL, MariaDB, H2");
        }
        return dialect;
    }

    /** Reads the table once: it exists and has the columns this class reads and writes. */
    private void verify() {
        try {
            jdbc.query("SELECT name, base, created_at FROM " + table + " WHERE 1 = 0", rs -> null);
        } catch (DataAccessException e) {
            throw new FencingConfigurationException("Issuer base table '" + table + "' is missing or lacks the "
                    + "columns name, base, created_at; create it with classpath:" + dialect.script() + " (its "
                    + "default name " + DEFAULT_TABLE + " replaced by yours): "
                    + TableVerifier.oneLine(String.valueOf(e.getMostSpecificCause())), e);
        }
        if (dialect == BaseDialect.MARIADB) {
            // a MEMORY (or other non-InnoDB) table loses its rows with a restart, or takes no part in transactions
            int dot = table.indexOf('.');
            List<String> engines = jdbc.queryForList("SELECT ENGINE FROM information_schema.TABLES WHERE "
                    + "TABLE_SCHEMA = " + (dot > 0 ? "?" : "DATABASE()") + " AND TABLE_NAME = ?", String.class,
                    dot > 0 ? new Object[] {table.substring(0, dot), table.substring(dot + 1)} : new Object[] {table});
            if (!engines.isEmpty() && !"InnoDB".equalsIgnoreCase(engines.get(0))) {
                throw new FencingConfigurationException("Issuer base table '" + table + "' uses the " + engines.get(0)
                        + " storage engine on MariaDB: a restart (MEMORY) or a crash can take its rows, and every "
                        + "instance would then store a base again, perhaps another one; convert it with: ALTER TABLE "
                        + table + " ENGINE=InnoDB (or recreate it with classpath:" + dialect.script() + ")");
            }
        }
        if (dialect == BaseDialect.POSTGRESQL) {
            // an UNLOGGED table is emptied by crash recovery: the base would be stored again, perhaps another one
            List<String> persistence = jdbc.queryForList(FenceSql.PERSISTENCE_SQL, String.class, table);
            String notDurable = persistence.isEmpty() ? null : FenceSql.notDurable(persistence.get(0));
            if (notDurable != null) {
                throw new FencingConfigurationException("Issuer base table '" + table + "' " + notDurable + ", and "
                        + "every instance would then store a base again, perhaps another one; make it durable with: "
                        + "ALTER TABLE " + table + " SET LOGGED (or recreate it with classpath:" + dialect.script()
                        + ")");
            }
        }
    }

    /** The table this object reads and writes. */
    public String table() {
        return table;
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalStateException when the table holds several rows for the name (it lacks its primary key)
     */
    @Override
    public OptionalLong stored(String name) {
        IssuerBase.checkName(name);
        List<Long> bases = jdbc.queryForList(dialect.selectSql(table), Long.class, name);
        if (bases.isEmpty()) {
            return OptionalLong.empty();
        }
        if (bases.stream().distinct().count() > 1) {
            throw new IllegalStateException("Issuer base table '" + table + "' holds several bases " + bases
                    + " for '" + name + "' (it has no primary key on name); recreate it with classpath:"
                    + dialect.script());
        }
        return OptionalLong.of(bases.get(0));
    }

    @Override
    public long establish(String name, long base) {
        IssuerBase.checkName(name);
        IssuerBase.checkBase(name, base);
        try {
            jdbc.update(dialect.insertIfAbsentSql(table), name, base);
        } catch (DuplicateKeyException e) {
            // another instance inserted it between H2's MERGE match and its insert: that base is the stored one
        }
        return stored(name).orElseThrow(() -> new IllegalStateException("Issuer base table '" + table
                + "' did not keep the base of '" + name + "'"));
    }

    /**
     * The bases stored in {@code table} on {@code dataSource} ({@link #storedBases()}), or empty when the table does
     * not exist there (the database says so: no migration ever stored a base in it). For a caller that bounds a reset
     * or floor raise by these bases, which must not read "none" from anything else.
     *
     * @throws FencingConfigurationException when the name is invalid, the database cannot be reached or read, or the
     *                                       table exists without the columns this class reads
     */
    public static Optional<Map<String, Long>> storedBasesIfPresent(DataSource dataSource, String table) {
        try {
            if (table != null && NAME.matcher(table).matches()
                    && MissingTable.listedAsAbsentOnMariaDb(new JdbcTemplate(dataSource), table)) {
                return Optional.empty();
            }
            return Optional.of(new JdbcIssuerBase(dataSource, table, false).storedBases());
        } catch (FencingConfigurationException e) {
            if (MissingTable.causes(e.getCause())) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /** {@inheritDoc} Oldest first, by the time each row was stored. */
    @Override
    public Map<String, Long> storedBases() {
        Map<String, Long> stored = new LinkedHashMap<>();
        jdbc.query("SELECT name, base FROM " + table + " ORDER BY created_at, name",
                rs -> {
                    stored.put(rs.getString(1), rs.getLong(2));
                });
        return Collections.unmodifiableMap(stored);
    }

    @Override
    public String toString() {
        return "JdbcIssuerBase[" + table + "]";
    }
}
