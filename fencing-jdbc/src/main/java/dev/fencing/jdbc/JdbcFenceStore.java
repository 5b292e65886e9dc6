package dev.fencing.jdbc;

import dev.fencing.FencingConfigurationException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.Verdict;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FenceStoreException;
import dev.fencing.store.FencedCall;
import dev.fencing.token.FencingToken;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.SQLErrorCodeSQLExceptionTranslator;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.OptionalLong;

/**
 * A {@link FenceStore} in a relational database: max_seen lives in a table (one row per effective resource) and is
 * checked and advanced by one statement on the connection of the caller's Spring-managed transaction, so the check
 * and the guarded write commit or roll back together. The row lock the statement takes serializes fenced writes to
 * the resource until commit; a check waits for it at most {@link Builder#lockTimeout} and then fails as
 * {@link FenceBusyException}. When no transaction is active for the store's data source, the store opens one around
 * the check and the write.
 *
 * <p>Built with {@link #builder(DataSource)}; {@link Builder#build()} checks the table name and detects (or checks)
 * the dialect. The table itself is checked by {@link #verify()}: at the end of application context startup when the
 * store is a Spring singleton (after {@code spring.sql.init}, Flyway or Liquibase created it), else before the first
 * check.
 */
public final class JdbcFenceStore implements FenceStore, SmartInitializingSingleton {

    /** The default table name. */
    public static final String DEFAULT_TABLE = "fencing_max_seen";

    /**
     * How long a check waits by default for the fence row of a resource that another transaction holds: long enough
     * for ordinary fenced transactions to finish, short enough that a paused writer does not stall every other one.
     */
    public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofSeconds(5);

    private static final Log log = LogFactory.getLog(JdbcFenceStore.class);

    private static final String PROBE = "fencing-startup-probe:Ab";

    private final JdbcTemplate jdbc;
    private final TransactionTemplate transactions;
    private final TransactionTemplate probeTransactions;
    private final FenceDialect dialect;
    private final String table;
    private final String checkSql;
    private final Duration lockTimeout;
    private final String readLockTimeoutSql;
    private final String setLockTimeoutSql;
    private final String swapLockTimeoutSql;
    private final boolean createTable;
    private volatile boolean verified;

    private JdbcFenceStore(DataSource dataSource, PlatformTransactionManager transactionManager, FenceDialect dialect,
                           String table, Duration lockTimeout, boolean createTable) {
        this.jdbc = new JdbcTemplate(dataSource);
        // the per-database error codes (lock timeout, deadlock, serialization failure), not only SQLSTATE classes
        this.jdbc.setExceptionTranslator(new SQLErrorCodeSQLExceptionTranslator(dialect.productName()));
        this.transactions = new TransactionTemplate(transactionManager);
        this.transactions.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRED);
        // the probe never joins (and never marks rollback-only) a caller's transaction when it runs lazily
        this.probeTransactions = new TransactionTemplate(transactionManager);
        this.probeTransactions.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        this.dialect = dialect;
        this.table = table;
        this.lockTimeout = lockTimeout;
        this.checkSql = dialect.checkSql(table, lockTimeout);
        this.readLockTimeoutSql = dialect.readLockTimeoutSql();
        this.setLockTimeoutSql = readLockTimeoutSql == null ? null
                : dialect.setLockTimeoutSql(dialect.lockTimeoutValue(lockTimeout));
        this.swapLockTimeoutSql = dialect.swapLockTimeoutSql(dialect.lockTimeoutValue(lockTimeout));
        this.createTable = createTable;
    }

    /** Starts a builder for a store on {@code dataSource}. */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /**
     * {@inheritDoc}
     *
     * @throws FenceBusyException     when the resource's fence row stayed locked longer than the lock wait bound
     * @throws FenceConflictException when the database aborted the check, or the commit of the transaction this
     *                                store opened, as a serialization failure or deadlock
     * @throws FenceStoreException    when the table failed {@link #verify()}, the check could not run, or the commit
     *                                of the transaction this store opened failed (the write must be taken as not
     *                                done)
     */
    @Override
    public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
        if (!resource.equals(token.resource())) {
            throw new IllegalArgumentException("Token " + token + " was issued for resource '" + token.resource()
                    + "', not for '" + resource + "'");
        }
        if (!verified) {
            try {
                verify();
            } catch (FencingConfigurationException e) {
                throw new FenceStoreException(resource, token, "Fence check for resource '" + resource
                        + "' refused: the store's table failed its startup check: " + e.getMessage(), e);
            }
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
        } catch (FenceBusyException | FenceConflictException e) {
            throw e;                               // from the check; the transaction rolled back
        } catch (DataAccessException | TransactionException e) {
            if (outcome.writeStarted) {
                throw commitFailed(resource, token, e);
            }
            throw new FenceStoreException(resource, token, "Fence check for resource '" + resource + "' in table '"
                    + table + "' could not run: " + e.getMessage(), e);
        }
        if (outcome.checked != null) {
            throw outcome.checked;
        }
        return outcome.value;
    }

    /**
     * The commit of the transaction this store opened failed after the check accepted and the write ran: neither
     * may be taken as done. A serialization failure or deadlock is retryable; anything else is an error.
     */
    private RuntimeException commitFailed(String resource, FencingToken token, RuntimeException e) {
        DataAccessException translated = translate("commit", e);
        if (translated instanceof ConcurrencyFailureException) { // no lock waits at commit: 40001, 40P01
            return new FenceConflictException(resource, token, "The fenced transaction of resource '" + resource
                    + "' (token " + token + ") was aborted at commit as a serialization failure or deadlock; "
                    + "neither the check nor the write persisted, and the operation may be retried: "
                    + e.getMessage(), e);
        }
        return new FenceStoreException(resource, token, "Commit of the fenced transaction of resource '" + resource
                + "' (token " + token + ", table '" + table + "') failed after the write ran; take the write as "
                + "not done: " + e.getMessage(), e);
    }

    /** Spring's translation of a failure: as is when already translated, else of the SQLException inside it. */
    private DataAccessException translate(String task, RuntimeException e) {
        if (e instanceof DataAccessException dae) {
            return dae;
        }
        for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sql) {
                return jdbc.getExceptionTranslator().translate(task, null, sql);
            }
        }
        return null;
    }

    private void check(String resource, FencingToken token) {
        String previousLockTimeout = null;
        if (readLockTimeoutSql != null) {
            try {
                if (swapLockTimeoutSql != null) {
                    previousLockTimeout = jdbc.queryForObject(swapLockTimeoutSql, (rs, n) -> rs.getString(1));
                } else {
                    previousLockTimeout = jdbc.queryForObject(readLockTimeoutSql, String.class);
                    jdbc.execute(setLockTimeoutSql);
                }
            } catch (DataAccessException e) {
                throw new FenceStoreException(resource, token, "Fence check for resource '" + resource
                        + "' could not bound its lock wait: " + e.getMessage(), e);
            }
        }
        Row row;
        boolean ran = false;
        try {
            row = runCheck(resource, token);
            ran = true;
        } finally {
            if (previousLockTimeout != null && (ran || dialect.restoresLockTimeoutAfterFailure())) {
                restoreLockTimeout(resource, token, previousLockTimeout, ran);
            }
        }
        if (row.maxSeen == token.value() && token.holder().equals(row.holder)) {
            return;
        }
        Verdict verdict = row.maxSeen > token.value() ? Verdict.REJECT_STALE : Verdict.REJECT_DUPLICATE;
        throw new StaleTokenException(resource, token, row.maxSeen, verdict);
    }

    /** Puts the caller's lock wait bound back, so that the statements after the check keep their own. */
    private void restoreLockTimeout(String resource, FencingToken token, String previous, boolean ran) {
        try {
            jdbc.execute(dialect.setLockTimeoutSql(previous));
        } catch (DataAccessException e) {
            if (ran) {
                throw new FenceStoreException(resource, token, "Fence check for resource '" + resource
                        + "' could not restore the connection's lock wait bound: " + e.getMessage(), e);
            }
            // the check failed already; its exception is the one to report
        }
    }

    private static FenceConflictException conflict(String resource, FencingToken token, DataAccessException e) {
        return new FenceConflictException(resource, token, "Fence check for resource '" + resource + "' (token "
                + token + ") was aborted by the database as a serialization failure or deadlock; the write did not "
                + "run, retry the transaction: " + e.getMessage(), e);
    }

    /**
     * Whether the database rolled the statement's transaction back (SQLSTATE class 40: serialization failure,
     * deadlock). Spring translates SQLSTATE 40001 without a vendor code (H2's deadlock) to
     * {@link CannotAcquireLockException} too, which otherwise means a lock wait timeout (55P03, MariaDB 1205, H2
     * 50200).
     */
    private static boolean rolledBack(DataAccessException e) {
        for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sql) {
                return sql.getSQLState() != null && sql.getSQLState().startsWith("40");
            }
        }
        return false;
    }

    private Row runCheck(String resource, FencingToken token) {
        for (int attempt = 1; ; attempt++) {
            Row row;
            try {
                row = jdbc.query(checkSql, ps -> {
                    ps.setString(1, resource);
                    ps.setLong(2, token.value());
                    ps.setString(3, token.holder());
                }, rs -> rs.next() ? new Row(rs.getLong(1), rs.getString(2)) : null);
            } catch (DuplicateKeyException e) {
                // another transaction inserted the resource's first row concurrently (H2's MERGE does not absorb
                // that as ON CONFLICT does): the statement, run again, takes the update path and its row lock
                if (!dialect.retriesFirstInsertRace() || attempt >= 3) {
                    throw new FenceStoreException(resource, token, "Fence check for resource '" + resource
                            + "' in table '" + table + "' failed: " + e.getMessage(), e);
                }
                continue;
            } catch (CannotAcquireLockException e) {
                if (rolledBack(e)) {
                    throw conflict(resource, token, e);
                }
                throw new FenceBusyException(resource, token, "Fence check for resource '" + resource + "' (token "
                        + token + ") waited more than " + lockTimeout.toMillis() + " ms for the resource's fence "
                        + "row in table '" + table + "', held by another transaction (a writer still inside its "
                        + "fenced body, or a paused one); the write did not run, retry later: " + e.getMessage(), e);
            } catch (ConcurrencyFailureException e) {
                throw conflict(resource, token, e);
            } catch (DataAccessException e) {
                throw new FenceStoreException(resource, token, "Fence check for resource '" + resource + "' in table '"
                        + table + "' failed: " + e.getMessage(), e);
            }
            if (row == null) {
                throw new FenceStoreException(resource, token, "Fence check for resource '" + resource
                        + "' returned no row from table '" + table + "'", null);
            }
            return row;
        }
    }

    /** The committed max_seen of {@code resource}, empty when it never accepted a token. */
    public OptionalLong maxSeen(String resource) {
        verify();
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
        verify();
        transactions.executeWithoutResult(status -> jdbc.query(checkSql, ps -> {
            ps.setString(1, resource);
            ps.setLong(2, value);
            ps.setNull(3, Types.VARCHAR);
        }, rs -> null));
    }

    /** The dialect detected (or configured) at build time. */
    public FenceDialect dialect() {
        return dialect;
    }

    /** The table name, as configured. */
    public String table() {
        return table;
    }

    /** How long a check waits for a resource's fence row held by another transaction. */
    public Duration lockTimeout() {
        return lockTimeout;
    }

    /**
     * The longest effective resource this store holds: {@link FencingToken#MAX_PART_LENGTH}, the library-wide limit;
     * {@link #verify()} refuses a table whose {@code resource} column is narrower.
     */
    public int maxResourceLength() {
        return FencingToken.MAX_PART_LENGTH;
    }

    /**
     * Checks the table once: creates it first when configured to, then checks the column types and widths, runs the
     * check on probe resources inside a transaction it rolls back (the table exists and behaves as a fence, and
     * resources differing only in case, accents or trailing spaces stay distinct), and reads the unique key on
     * {@code resource}. Idempotent and thread-safe; a failed verification is repeated on the next call.
     *
     * @throws FencingConfigurationException naming the table, the column and the fix
     */
    @Override
    public void verify() {
        if (verified) {
            return;
        }
        synchronized (this) {
            if (verified) {
                return;
            }
            if (createTable) {
                try {
                    probeTransactions.executeWithoutResult(status -> jdbc.execute(dialect.createTableSql(table)));
                } catch (DataAccessException | TransactionException e) {
                    throw new FencingConfigurationException("Fence table '" + table + "' could not be created on "
                            + dialect.productName() + ": " + rootMessage(e), e);
                }
            }
            try {
                probeTransactions.executeWithoutResult(status -> Dialects.requireColumns(jdbc, dialect,
                        "Fence table", table, script(), Map.of(
                                "resource", Dialects.ColumnNeed.TEXT,
                                "max_seen", Dialects.ColumnNeed.BIGINT,
                                "holder", Dialects.ColumnNeed.TEXT)));
            } catch (DataAccessException | TransactionException e) {
                throw new FencingConfigurationException("Fence table '" + table + "' could not be inspected on "
                        + dialect.productName() + ": " + rootMessage(e), e);
            }
            probe();
            probeTransactions.executeWithoutResult(status -> requireUniqueResourceKey());
            verified = true;
        }
        log.info("JdbcFenceStore: table '" + table + "' on " + dialect.productName() + " verified; resources up to "
                + maxResourceLength() + " characters, lock wait bound " + lockTimeout.toMillis() + " ms");
    }

    /** Verifies the table once every singleton of the application context exists, after database initialization. */
    @Override
    public void afterSingletonsInstantiated() {
        verify();
    }

    private String script() {
        return "classpath:" + dialect.schemaResource();
    }

    private record Row(long maxSeen, String holder) {
    }

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
     * connection, a {@link DataSourceTransactionManager} on the data source, a lock wait bound of 5 seconds, no table
     * creation.
     */
    public static final class Builder {
        private final DataSource dataSource;
        private PlatformTransactionManager transactionManager;
        private FenceDialect dialect;
        private String table = DEFAULT_TABLE;
        private boolean createTable;
        private Duration lockTimeout = DEFAULT_LOCK_TIMEOUT;

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

        /**
         * Whether {@link JdbcFenceStore#verify()} creates the table when it does not exist (default: no, use the
         * schema script).
         */
        public Builder createTableIfMissing(boolean createTable) {
            this.createTable = createTable;
            return this;
        }

        /**
         * How long a check waits for the fence row of a resource that another transaction holds (a writer inside its
         * fenced body, until it commits) before failing with {@link FenceBusyException}; default 5 seconds, at least
         * 1 ms. Longer lets slow fenced transactions queue; shorter frees writers sooner from a paused holder.
         * PostgreSQL: {@code lock_timeout}, set for the check statement only; MariaDB:
         * {@code innodb_lock_wait_timeout} for the check statement, in whole seconds rounded up; H2: the session's
         * {@code LOCK_TIMEOUT}, restored after the check.
         */
        public Builder lockTimeout(Duration lockTimeout) {
            Objects.requireNonNull(lockTimeout, "lockTimeout");
            if (lockTimeout.toMillis() < 1) {
                throw new FencingConfigurationException("JdbcFenceStore lockTimeout must be at least 1 ms, was "
                        + lockTimeout);
            }
            this.lockTimeout = lockTimeout;
            return this;
        }

        /**
         * Checks the table name, detects (or checks) the dialect and builds the store. The table is checked later,
         * by {@link JdbcFenceStore#verify()}, so that the application's database initialization can create it first.
         *
         * @throws FencingConfigurationException saying what to do, when the table name is invalid, or the database
         *                                       is unreachable, unsupported or not the configured dialect
         */
        public JdbcFenceStore build() {
            Dialects.requireTableName("JdbcFenceStore", table);
            dialect = Dialects.detect(dataSource, dialect, "JdbcFenceStore");
            PlatformTransactionManager tm = transactionManager != null ? transactionManager
                    : new DataSourceTransactionManager(dataSource);
            return new JdbcFenceStore(dataSource, tm, dialect, table, lockTimeout, createTable);
        }
    }

    /**
     * Runs the check on probe resources inside a transaction that is rolled back: a second, smaller token must be
     * refused (the table exists, has the columns, and keys the rows by resource), and resources that differ only in
     * case, accents or trailing spaces must get rows of their own (the resource column compares exactly).
     */
    private void probe() {
        try {
            probeTransactions.executeWithoutResult(status -> {
                status.setRollbackOnly();
                check(PROBE, new FencingToken(PROBE, 2, "probe-a"));
                try {
                    check(PROBE, new FencingToken(PROBE, 1, "probe-b"));
                    throw new FencingConfigurationException("Fence table '" + table + "' accepted a smaller token "
                            + "after a larger one: its 'resource' column must be the primary key; recreate it with "
                            + script());
                } catch (StaleTokenException expected) {
                    // keyed by resource
                }
                requireDistinct(PROBE.replace("Ab", "aB"), "compares case-insensitively ('" + PROBE + "' and '"
                        + PROBE.replace("Ab", "aB") + "' are one row)");
                requireDistinct(PROBE + " ", "ignores trailing spaces (PAD SPACE: '" + PROBE + "' and '" + PROBE
                        + " ' are one row)");
                requireDistinct(PROBE.replace("Ab", "\u00c4b"), "compares accent-insensitively ('" + PROBE + "' and '"
                        + PROBE.replace("Ab", "\u00c4b") + "' are one row)");
            });
        } catch (FenceStoreException | DataAccessException e) {
            throw new FencingConfigurationException("Fence table '" + table + "' is missing or unusable on "
                    + dialect.productName() + " (" + rootMessage(e) + "). Create it with the script "
                    + script() + " (see the README), or build the store with createTableIfMissing(true)", e);
        }
    }

    private void requireDistinct(String resource, String problem) {
        try {
            check(resource, new FencingToken(resource, 1, "probe-c"));
        } catch (StaleTokenException merged) {
            throw new FencingConfigurationException("Fence table '" + table + "' column 'resource' " + problem
                    + ", so distinct resources would share one max_seen; give it an exact (binary, no-pad) "
                    + "comparison: " + dialect.alterColumnSql(table, "resource") + " (and the same for 'holder'), "
                    + "or recreate the table with " + script());
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
                // a set per index: the schema spelled as given and in lower case may be one schema, read twice
                Map<String, Set<String>> columnsByIndex = new HashMap<>();
                for (String s : schema == null ? new String[] {null}
                        : new LinkedHashSet<>(List.of(schema, schema.toLowerCase(Locale.ROOT),
                                schema.toUpperCase(Locale.ROOT))).toArray(String[]::new)) {
                    try (ResultSet rs = meta.getIndexInfo(c.getCatalog(), s, candidate, true, false)) {
                        while (rs.next()) {
                            String index = rs.getString("INDEX_NAME");
                            String column = rs.getString("COLUMN_NAME");
                            if (index != null && column != null) {
                                columnsByIndex.computeIfAbsent(index, k -> new LinkedHashSet<>()).add(column);
                            }
                        }
                    }
                }
                for (Set<String> columns : columnsByIndex.values()) {
                    if (columns.size() == 1 && columns.iterator().next().equalsIgnoreCase("resource")) {
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
