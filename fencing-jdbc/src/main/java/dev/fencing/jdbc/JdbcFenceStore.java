package dev.fencing.jdbc;

import dev.fencing.FencingConfigurationException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.Verdict;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FenceStoreException;
import dev.fencing.store.FencedCall;
import dev.fencing.token.FencingToken;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.Types;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * A {@link FenceStore} in a relational database: max_seen lives in a table (one row per effective resource) and is
 * checked and advanced by one statement on the connection of the caller's Spring-managed transaction, so the check
 * and the guarded write commit or roll back together. The row lock the statement takes serializes fenced writes to
 * the resource until commit. When no transaction is active for the store's data source, the store opens one around
 * the check and the write.
 *
 * <p>Built with {@link #builder(DataSource)}; {@link Builder#build()} detects (or checks) the dialect and probes the
 * table, so misconfiguration fails at startup.
 */
public final class JdbcFenceStore implements FenceStore {

    /** The default table name. */
    public static final String DEFAULT_TABLE = "fencing_max_seen";


    private final JdbcTemplate jdbc;
    private final TransactionTemplate transactions;
    private final FenceDialect dialect;
    private final String table;
    private final String checkSql;

    private JdbcFenceStore(DataSource dataSource, PlatformTransactionManager transactionManager, FenceDialect dialect,
                           String table) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.transactions = new TransactionTemplate(transactionManager);
        this.transactions.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRED);
        this.dialect = dialect;
        this.table = table;
        this.checkSql = dialect.checkSql(table);
    }

    /** Starts a builder for a store on {@code dataSource}. */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    @Override
    public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
        if (!resource.equals(token.resource())) {
            throw new IllegalArgumentException("Token " + token + " was issued for resource '" + token.resource()
                    + "', not for '" + resource + "'");
        }
        Outcome<T> outcome = new Outcome<>();
        try {
            transactions.executeWithoutResult(status -> {
                check(resource, token);
                outcome.writeStarted = true;
                try {
                    outcome.value = write.proceed();
                } catch (RuntimeException | Error e) {
                    throw new WriteFailed(e);      // rolls back check and write together
                } catch (Throwable checked) {
                    outcome.checked = checked;     // Spring's default rule: a checked exception commits
                }
            });
        } catch (WriteFailed e) {
            throw e.getCause();
        } catch (DataAccessException | TransactionException e) {
            if (outcome.writeStarted) {
                throw e;                           // commit failed: neither the check nor the write persisted
            }
            throw new FenceStoreException(resource, token, "Fence check for resource '" + resource + "' in table '"
                    + table + "' could not run: " + e.getMessage(), e);
        }
        if (outcome.checked != null) {
            throw outcome.checked;
        }
        return outcome.value;
    }

    private void check(String resource, FencingToken token) {
        Row row = null;
        for (int attempt = 1; row == null; attempt++) {
            try {
                row = jdbc.query(checkSql, ps -> {
                    ps.setString(1, resource);
                    ps.setLong(2, token.value());
                    ps.setString(3, token.holder());
                }, rs -> rs.next() ? new Row(rs.getLong(1), rs.getString(2)) : NO_ROW);
            } catch (DuplicateKeyException e) {
                // another transaction inserted the resource's first row concurrently (H2's MERGE does not absorb
                // that as ON CONFLICT does): the statement, run again, takes the update path and its row lock
                if (!dialect.retriesFirstInsertRace() || attempt >= 3) {
                    throw new FenceStoreException(resource, token, "Fence check for resource '" + resource
                            + "' in table '" + table + "' failed: " + e.getMessage(), e);
                }
            } catch (DataAccessException e) {
                throw new FenceStoreException(resource, token, "Fence check for resource '" + resource + "' in table '"
                        + table + "' failed: " + e.getMessage(), e);
            }
        }
        if (row == NO_ROW) {
            row = null;
        }
        if (row == null) {
            throw new FenceStoreException(resource, token, "Fence check for resource '" + resource
                    + "' returned no row from table '" + table + "'", null);
        }
        if (row.maxSeen == token.value() && token.holder().equals(row.holder)) {
            return;
        }
        Verdict verdict = row.maxSeen > token.value() ? Verdict.REJECT_STALE : Verdict.REJECT_DUPLICATE;
        throw new StaleTokenException(resource, token, row.maxSeen, verdict);
    }

    /** The committed max_seen of {@code resource}, empty when it never accepted a token. */
    public OptionalLong maxSeen(String resource) {
        Long value = jdbc.query("SELECT max_seen FROM " + table + " WHERE resource = ?",
                rs -> rs.next() ? rs.getLong(1) : null, resource);
        return value == null ? OptionalLong.empty() : OptionalLong.of(value);
    }

    /**
     * Raises max_seen of {@code resource} to at least {@code value}, with no holder, so that tokens up to and
     * including {@code value} are rejected; never lowers it. For restoring a floor known from elsewhere (for
     * example the last token a previous lock service issued).
     */
    public void raiseFloor(String resource, long value) {
        if (resource == null || resource.isBlank()) {
            throw new IllegalArgumentException("resource must not be blank");
        }
        if (value <= 0) {
            throw new IllegalArgumentException("floor for resource '" + resource + "' must be positive, was " + value);
        }
        transactions.executeWithoutResult(status -> jdbc.query(checkSql, ps -> {
            ps.setString(1, resource);
            ps.setLong(2, value);
            ps.setNull(3, Types.VARCHAR);
        }, rs -> null));
    }

    public FenceDialect dialect() {
        return dialect;
    }

    public String table() {
        return table;
    }

    private record Row(long maxSeen, String holder) {
    }

    private static final Row NO_ROW = new Row(Long.MIN_VALUE, null);

    /** Carries the write's own unchecked exception through the transaction template, which rolls back on it. */
    private static final class WriteFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        WriteFailed(Throwable cause) {
            super(cause.getMessage(), cause, false, false);
        }
    }

    private static final class Outcome<T> {
        T value;
        Throwable checked;
        boolean writeStarted;
    }

    /**
     * Configures a {@link JdbcFenceStore}. Defaults: table {@value #DEFAULT_TABLE}, dialect detected from the
     * connection, a {@link DataSourceTransactionManager} on the data source, no table creation.
     */
    public static final class Builder {
        private final DataSource dataSource;
        private PlatformTransactionManager transactionManager;
        private FenceDialect dialect;
        private String table = DEFAULT_TABLE;
        private boolean createTable;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /**
         * The transaction manager whose transactions the check joins (the one your repositories use). Must manage
         * the same data source; defaults to a new {@link DataSourceTransactionManager} on it.
         */
        public Builder transactionManager(PlatformTransactionManager transactionManager) {
            this.transactionManager = Objects.requireNonNull(transactionManager, "transactionManager");
            return this;
        }

        /** Forces the dialect; startup fails if the database is another product. Detected when not set. */
        public Builder dialect(FenceDialect dialect) {
            this.dialect = Objects.requireNonNull(dialect, "dialect");
            return this;
        }

        /** The table name, optionally schema-qualified: letters, digits and underscores only. */
        public Builder table(String table) {
            this.table = table;
            return this;
        }

        /** Whether to create the table at startup when it does not exist (default: no, use the schema script). */
        public Builder createTableIfMissing(boolean createTable) {
            this.createTable = createTable;
            return this;
        }

        /**
         * Validates the configuration against the live database and builds the store.
         *
         * @throws FencingConfigurationException saying what to do, when the table name is invalid, the database
         *                                       is unsupported or not the configured dialect, or the table is
         *                                       missing or does not behave as a fence table
         */
        public JdbcFenceStore build() {
            Dialects.requireTableName("JdbcFenceStore", table);
            dialect = Dialects.detect(dataSource, dialect, "JdbcFenceStore");
            PlatformTransactionManager tm = transactionManager != null ? transactionManager
                    : new DataSourceTransactionManager(dataSource);
            JdbcFenceStore store = new JdbcFenceStore(dataSource, tm, dialect, table);
            if (createTable) {
                store.jdbc.execute(dialect.createTableSql(table));
            }
            store.probe();
            store.requireUniqueResourceKey();
            return store;
        }
    }

    /**
     * Runs the check twice on a probe resource inside a transaction that is rolled back: the second, smaller token
     * must be refused. Proves the table exists, has the columns, and has a unique key on resource.
     */
    private void probe() {
        String probe = "fencing-startup-probe";
        try {
            transactions.executeWithoutResult(status -> {
                status.setRollbackOnly();
                check(probe, new FencingToken(probe, 2, "probe-a"));
                try {
                    check(probe, new FencingToken(probe, 1, "probe-b"));
                } catch (StaleTokenException expected) {
                    return;
                }
                throw new FencingConfigurationException("Fence table '" + table + "' accepted a smaller token after a "
                        + "larger one: its 'resource' column must be the primary key; recreate it with "
                        + dialect.schemaResource());
            });
        } catch (FenceStoreException | DataAccessException e) {
            throw new FencingConfigurationException("Fence table '" + table + "' is missing or unusable on "
                    + dialect.productName() + " (" + rootMessage(e) + "). Create it with the script "
                    + "classpath:" + dialect.schemaResource() + " (see the README), or build the store with "
                    + "createTableIfMissing(true)", e);
        }
    }

    /**
     * Without a unique key on {@code resource}, two first checks of one resource could both insert, and the fence
     * would compare against the wrong row. The probe cannot see that on every database (H2's MERGE matches by its
     * ON clause), so the key is also read from the metadata.
     */
    private void requireUniqueResourceKey() {
        Boolean found = jdbc.execute((Connection c) -> {
            DatabaseMetaData meta = c.getMetaData();
            String schema = table.contains(".") ? table.substring(0, table.indexOf('.')) : null;
            String name = table.contains(".") ? table.substring(table.indexOf('.') + 1) : table;
            for (String candidate : new String[] {name, name.toLowerCase(Locale.ROOT),
                    name.toUpperCase(Locale.ROOT)}) {
                Map<String, List<String>> columnsByIndex = new HashMap<>();
                for (String s : schema == null ? new String[] {null}
                        : new String[] {schema, schema.toLowerCase(Locale.ROOT), schema.toUpperCase(Locale.ROOT)}) {
                    try (ResultSet rs = meta.getIndexInfo(c.getCatalog(), s, candidate, true, false)) {
                        while (rs.next()) {
                            String index = rs.getString("INDEX_NAME");
                            String column = rs.getString("COLUMN_NAME");
                            if (index != null && column != null) {
                                columnsByIndex.computeIfAbsent(index, k -> new ArrayList<>()).add(column);
                            }
                        }
                    }
                }
                for (List<String> columns : columnsByIndex.values()) {
                    if (columns.size() == 1 && columns.get(0).equalsIgnoreCase("resource")) {
                        return true;
                    }
                }
            }
            return false;
        });
        if (!Boolean.TRUE.equals(found)) {
            throw new FencingConfigurationException("Fence table '" + table + "' has no primary key or unique index "
                    + "on 'resource' alone, so two first checks of a resource could both insert; recreate it with "
                    + "classpath:" + dialect.schemaResource());
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        return root.getMessage();
    }
}
