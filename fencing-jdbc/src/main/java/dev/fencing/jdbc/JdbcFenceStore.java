package dev.fencing.jdbc;

import dev.fencing.FencingConfigurationException;
import dev.fencing.FencingException;
import dev.fencing.context.MissingTokenException;
import dev.fencing.rule.FenceRule;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.retention.CompactionResult;
import dev.fencing.retention.FenceCompaction;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.retention.ResourceFamily;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FenceStoreException;
import dev.fencing.store.OutsideTransactionException;
import dev.fencing.store.DeferredVerdict;
import dev.fencing.store.FencedCall;
import dev.fencing.store.sql.FenceSql;
import dev.fencing.store.sql.FloorRows;
import dev.fencing.token.FencingToken;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.core.Ordered;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.PreparedStatementCallback;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.support.SQLErrorCodeSQLExceptionTranslator;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.ResourceHolderSupport;
import org.springframework.transaction.support.ResourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionSynchronizationUtils;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;

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
 * check; {@link TableVerifier} does the checking, the same way for the lease table of {@link JdbcTokenIssuer}.
 *
 * <p>With {@link Builder#checkAtCommit(boolean)} (PostgreSQL only, off by default) the check moves to the
 * round trip of the transaction's {@code COMMIT}: the method body runs first and the verdict comes at commit, so only
 * the body's database writes in that transaction are fenced; a rejected check fails before its {@code COMMIT} runs,
 * the transaction rolls back, and the commit fails with the {@link TokenRejectedException}.
 *
 * <p>The store only checks tokens, optionally bounding how far one token may move max_seen
 * ({@link Builder#maxAdvance}). Reading a resource's max_seen, raising a floor and lowering max_seen after a bad
 * token are administrative tasks, done by a {@link JdbcFenceAdmin} on the store.
 */
public final class JdbcFenceStore implements FenceStore, FenceCompaction, SmartInitializingSingleton,
        BeanFactoryAware, ApplicationListener<ContextRefreshedEvent> {

    private static final Log LOG = LogFactory.getLog(JdbcFenceStore.class);

    /** The default table name. */
    public static final String DEFAULT_TABLE = "fencing_max_seen";

    /**
     * How long a check waits by default for the fence row of a resource that another transaction holds: long enough
     * for ordinary fenced transactions to finish, short enough that a paused writer does not stall every other one.
     */
    public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofSeconds(5);

    /**
     * The longest lock wait bound a store takes: {@link Integer#MAX_VALUE} ms (about 24.8 days), the most PostgreSQL's
     * {@code lock_timeout} and H2's {@code LOCK_TIMEOUT} hold.
     */
    public static final Duration MAX_LOCK_TIMEOUT = Duration.ofMillis(Integer.MAX_VALUE);

    private final JdbcTemplate jdbc;
    private final TransactionTemplate transactions;
    /**
     * For a store given a plain {@link DataSourceTransactionManager} (or {@code JdbcTransactionManager}): transactions
     * that join a JPA or Hibernate transaction on the store's DataSource, which that manager would take for none, begin
     * on the same connection and commit at the end of the check, part-way through the caller's transaction
     * ({@link #transactionsNow}); {@code null} otherwise.
     */
    private final TransactionTemplate joiningForeign;
    private final DataSource dataSource;
    /**
     * What a transaction of the store's transaction manager binds to the thread (its data source, or entity manager
     * factory): a transaction active without it belongs to another manager, which the check cannot join; {@code null}
     * for a manager that binds none (JTA), whose transactions the store joins as they are.
     */
    private final Object transactionResource;
    /**
     * The store's DataSource as a transaction resource when the manager's transactions are bound under another key
     * (a JPA or Hibernate manager's factory), else {@code null}: such a transaction must also hold a connection of it.
     */
    private final Object connectionResource;
    /** The store's DataSource as Spring keys its connections (unwrapped): with {@link #table}, whose rows it checks. */
    private final Object dataSourceKey;
    private final JdbcDialect dialect;
    private final String table;
    private final String checkSql;
    /** The check of a resource without a family, which reads no floor ({@link FenceSql#familylessCheckSql}). */
    private final String familylessCheckSql;
    private final String floorSql;
    private final long maxAdvance;
    private final Duration lockTimeout;
    private BeanFactory beanFactory;
    /** Whether the fencing infrastructure (or the application) verified this store: something checks through it. */
    private volatile boolean guarded;
    /** Whether the context's startup ran {@link #requireGuard()}: once, with the singletons or at the refresh. */
    private volatile boolean guardChecked;
    private final String readLockTimeoutSql;
    private final String setLockTimeoutSql;
    private final String swapLockTimeoutSql;
    /** Whether the check's text bounds its own lock wait (PostgreSQL, MariaDB), or the store around it (H2). */
    private final boolean checkBoundsItself;
    /** PostgreSQL: the check's text is the bound's query, the check, the restore; its row is the second result. */
    private final boolean checkIsSecondResult;
    private final TableVerifier verifier;
    /** The administration of this store's table, built once: {@link #compact} and {@link #familyFloor} reuse it. */
    private final JdbcFenceAdmin admin;
    private final boolean checkAtCommit;
    /**
     * Whether the table is compacted ({@link Builder#compacted}, or a {@link JdbcFenceAdmin#compact} of this store
     * ran): on PostgreSQL and H2, checks in transactions above READ COMMITTED are then refused.
     */
    private volatile boolean compacted;
    /** MariaDB, H2: a deadlock rolls back the whole transaction, checks included ({@link HeldChecks}). */
    private final boolean rollsBackOnDeadlock;
    /** Whether a resource fenced twice in one transaction checked at commit was reported (once per store). */
    private volatile boolean warnedOfRepeat;
    /** MariaDB: has the floor row of each family checked created ({@link FloorRows}); {@code null} elsewhere. */
    private final FloorRows floorRows;
    /** The checks-and-COMMIT texts for 1..{@value #CACHED_BATCHES} checks, when checking at commit. */
    private final String[] atCommitSql;
    private static final int CACHED_BATCHES = 8;
    /** MariaDB's error code for a statement stopped by {@code max_statement_time}. */
    private static final int MARIADB_STATEMENT_TIMEOUT = 1969;

    private JdbcFenceStore(Builder b, PlatformTransactionManager transactionManager) {
        this.dialect = b.configuredDialect();
        this.table = b.tableName();
        this.jdbc = new JdbcTemplate(b.dataSource());
        // the per-database error codes (lock timeout, deadlock, serialization failure), not only SQLSTATE classes
        this.jdbc.setExceptionTranslator(new SQLErrorCodeSQLExceptionTranslator(dialect.productName()));
        this.transactions = new TransactionTemplate(transactionManager);
        this.transactions.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRED);
        this.dataSource = b.dataSource();
        this.joiningForeign = transactionManager instanceof DataSourceTransactionManager
                && !(transactionManager instanceof JoiningDataSourceTransactionManager)
                ? new TransactionTemplate(new JoiningDataSourceTransactionManager(b.dataSource())) : null;
        this.transactionResource = transactionManager instanceof ResourceTransactionManager resources
                && resources.getResourceFactory() != null
                ? TransactionSynchronizationUtils.unwrapResourceIfNecessary(resources.getResourceFactory()) : null;
        Object connections = ManagedDataSources.key(b.dataSource());
        this.dataSourceKey = connections;
        // a JPA or Hibernate manager of the same DataSource: its transactions are found by its factory, the
        // check's connection by the DataSource (null when they are one key, as for a DataSourceTransactionManager)
        this.connectionResource = transactionResource != null && transactionResource != connections ? connections
                : null;
        this.lockTimeout = b.lockTimeout;
        String rounded = dialect.fenceSql().lockTimeoutRounding("JdbcFenceStore", table, lockTimeout);
        if (rounded != null) {
            LOG.warn(rounded);
        }
        this.maxAdvance = b.maxAdvance;
        // PostgreSQL: the bound swapped in, the check, the caller's bound put back, one text in one round trip (the
        // check's row the second result); MariaDB: bounded by the statement itself; H2: around it
        boolean postgresql = dialect.fenceSql() == FenceSql.POSTGRESQL;
        String lockTimeoutValue = dialect.lockTimeoutValue(lockTimeout);
        this.checkSql = postgresql ? FenceSql.POSTGRESQL.boundedCheckSql(table, lockTimeoutValue, maxAdvance)
                : dialect.checkSql(table, lockTimeout, maxAdvance);
        this.familylessCheckSql = postgresql
                ? FenceSql.POSTGRESQL.familylessBoundedCheckSql(table, lockTimeoutValue, maxAdvance)
                : dialect.fenceSql().familylessCheckSql(table, lockTimeout, maxAdvance);
        this.checkIsSecondResult = postgresql;
        this.floorSql = dialect.checkSql(table, lockTimeout);
        this.readLockTimeoutSql = dialect.readLockTimeoutSql();
        this.setLockTimeoutSql = readLockTimeoutSql == null ? null
                : dialect.setLockTimeoutSql(dialect.lockTimeoutValue(lockTimeout));
        this.swapLockTimeoutSql = dialect.swapLockTimeoutSql(lockTimeoutValue);
        this.checkBoundsItself = postgresql || readLockTimeoutSql == null;
        this.checkAtCommit = b.checkAtCommit;
        this.compacted = b.compacted;
        this.rollsBackOnDeadlock = dialect.fenceSql() != FenceSql.POSTGRESQL;
        String floorRowSql = dialect.fenceSql().floorRowSql(table, lockTimeout);
        this.floorRows = floorRowSql == null ? null
                : new FloorRows(table, new FloorRowInserts(jdbc, transactions, floorRowSql, table));
        this.atCommitSql = new String[CACHED_BATCHES + 1];
        if (checkAtCommit) {
            for (int n = 1; n <= CACHED_BATCHES; n++) {
                atCommitSql[n] = atCommitSql(n, true);
            }
        }
        // the probe runs the check itself, in a transaction of the verifier's own
        this.verifier = b.verifier(jdbc, transactionManager,
                TableVerifier.fenceProbe(table, dialect, token -> check(token.resource(), token, true)),
                () -> "; resources up to " + maxResourceLength() + " characters, lock wait bound "
                        + lockTimeout.toMillis() + " ms"
                        + (checkAtCommit ? ", checks sent with COMMIT (check-at-commit)" : ""));
        // last: the admin reads the dialect and table assigned above, and keeps no other state of this store
        this.admin = new JdbcFenceAdmin(this);
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
     *                                done); an {@link dev.fencing.store.OutsideTransactionException} (the write did
     *                                not run) when the caller's transaction is another transaction manager's (one
     *                                holding no connection of the store's data source), and when checking at commit
     *                                also when the transaction has no transaction synchronization, or is a JPA or
     *                                Hibernate one
     * @throws TokenRejectedException when checking at commit and this store opened the transaction: the rejection,
     *                                raised by its commit after the write ran (nothing of it persisted); with the
     *                                caller's transaction, the caller's commit raises it instead
     */
    /**
     * {@inheritDoc} The work of {@link JdbcFenceAdmin#compact}, on this store's table: so the application's store
     * bean is what a scheduled compaction runs on.
     */
    @Override
    public CompactionResult compact(Duration idleFor, int batchSize, IssuerFloors issuer) {
        return admin.compact(idleFor, batchSize, issuer);
    }

    /** {@inheritDoc} As {@link JdbcFenceAdmin#familyFloor}. */
    @Override
    public OptionalLong familyFloor(String family) {
        return admin.familyFloor(family);
    }

    @Override
    public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
        if (resource == null || write == null) { // refused before the check and its transaction
            throw new NullPointerException("JdbcFenceStore.fence on table '" + table + "': " + (resource == null
                    ? "the resource to fence is null" : "the write for resource '" + resource + "' is null")
                    + " (token " + token + "); nothing was checked");
        }
        if (token == null) { // FencingContext.present(..) answers null when nothing is bound: refused, not an NPE
            throw new MissingTokenException(resource, "a check of JdbcFenceStore on table '" + table + "'");
        }
        if (!resource.equals(token.resource())) {
            throw new IllegalArgumentException("Token " + token + " was issued for resource '" + token.resource()
                    + "', not for '" + resource + "'");
        }
        if (!verifier.isVerified()) {
            try {
                verifyTable();
            } catch (FencingConfigurationException e) {
                throw new FenceStoreException(resource, token, "Fence check for resource '" + resource
                        + "' refused: the store's table failed its startup check: " + e.getMessage(), e);
            }
        }
        return inTransaction(resource, token, write);
    }

    /**
     * Runs the check and the write in one transaction (the caller's, or one of its own): the check first, or with
     * {@link Builder#checkAtCommit(boolean)} the write at once and the check queued for that transaction's commit,
     * where {@link CommitChecks} sends it with {@code COMMIT} (the verdict reported through the write's
     * {@link FencedCall#deferVerdict()}).
     */
    private <T> T inTransaction(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
        requireJoinableTransaction(resource, token);
        Outcome<T> outcome = new Outcome<>();
        try {
            transactionsNow().executeWithoutResult(status -> {
                if (transactionResource == null) {
                    requireEnlistedConnection(resource, token);
                }
                CommitChecks queue = checkAtCommit ? commitChecks(resource, token) : null;
                if (queue != null && !queue.sent()) {
                    queue.add(resource, token, write.deferVerdict());
                } else {
                    // the default mode, or a call made once this transaction's checks went (in a synchronization's
                    // beforeCommit after them, in afterCommit): checked now, before its write, on the same connection
                    if (rollsBackOnDeadlock) {
                        HeldChecks.requireSynchronization(resource, token, table);
                    }
                    try {
                        if (rollsBackOnDeadlock) {
                            HeldChecks.confirmEarlier(JdbcFenceStore.this, resource, token);
                        }
                        check(resource, token, false);
                        if (rollsBackOnDeadlock) {
                            HeldChecks.hold(JdbcFenceStore.this, resource, token);
                        }
                    } catch (TokenRejectedException rejected) {
                        // thrown once out of the template: from inside, it would mark the caller's transaction
                        // rollback-only. A body may catch a nested call's rejection and go on; observe mode runs the
                        // write itself in this same transaction. A transaction of the store's own is rolled back: a
                        // first check refused below its family's floor inserted the resource's row at that floor
                        if (status.isNewTransaction()) {
                            status.setRollbackOnly();
                        }
                        outcome.rejected = rejected;
                        return;
                    }
                }
                outcome.writeStarted = true;
                String outer = TransactionOrigins.enterFencedBody(resource);
                try {
                    outcome.value = write.proceed();
                } catch (RuntimeException | Error e) {
                    throw new WriteFailed(e);      // rolls back the check (or drops the queued one) with the write
                } catch (Throwable checked) {
                    outcome.checked = checked;     // Spring's default rule: a checked exception commits
                } finally {
                    TransactionOrigins.exitFencedBody(outer);
                }
            });
        } catch (WriteFailed e) {
            throw e.getCause();
        } catch (FencingException | FenceBusyException | FenceConflictException e) {
            throw e;                               // refused before the write, or this transaction's verdict
        } catch (DataAccessException | TransactionException e) {
            if (outcome.writeStarted) {
                throw commitFailed(resource, token, e);
            }
            throw new FenceStoreException(resource, token, "Fence check for resource '" + resource + "' in table '"
                    + table + "' could not run: " + e.getMessage(), e);
        }
        if (outcome.rejected != null) {
            throw outcome.rejected;
        }
        if (outcome.checked != null) {
            throw outcome.checked;
        }
        return outcome.value;
    }

    /**
     * Refuses a call made in a transaction of another transaction manager (another data source's, say): the store
     * would check in a transaction of its own, committed when the call returns, apart from the writes of the caller's
     * transaction, which could then commit after a newer token's. Also when that other manager's transaction is the
     * innermost one on the thread ({@link TransactionOrigins}, where it listens) inside a transaction of the store's
     * own data source, even one suspended: the check would join the outer transaction, or run in one of its own,
     * while the method's writes commit with the inner one. And a call in a read-only transaction of the store's data
     * source, where the check cannot advance max_seen. Nothing is checked and the write does not run.
     */
    private void requireJoinableTransaction(String resource, FencingToken token) {
        if (transactionResource == null) {
            return;
        }
        String innermost = TransactionOrigins.innermostWithout(transactionResource);
        if (innermost != null) {
            throw new OutsideTransactionException(resource, token, "Fence check for resource '" + resource
                    + "' refused: the innermost transaction on the calling thread was begun by transaction manager "
                    + innermost + " and holds nothing of the store's DataSource. The check on table '" + table
                    + "' cannot be part of that transaction: it would commit apart from the method's writes (with an "
                    + "outer transaction of the store's DataSource, or in one of its own). If the method writes to "
                    + "the other manager's DataSource, fence it with a store on that DataSource (a RoutingFenceStore "
                    + "route, say); if it writes to the store's DataSource, call it outside the other manager's "
                    + "transaction. The write did not run");
        }
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            return;
        }
        if (!TransactionSynchronizationManager.hasResource(transactionResource) && connectionResource != null
                && TransactionSynchronizationManager.hasResource(connectionResource)) {
            throw new OutsideTransactionException(resource, token, "Fence check for resource '" + resource
                    + "' refused: the calling thread is in a transaction of another transaction manager on the "
                    + "store's own DataSource (a DataSourceTransactionManager or JdbcTransactionManager beside the "
                    + "store's " + transactions.getTransactionManager().getClass().getSimpleName() + "), which the "
                    + "store's manager cannot join: it would begin a transaction of its own on that connection, and "
                    + "the check on table '" + table + "' could commit apart from the method's writes. Run the "
                    + "fenced call in a transaction of the store's manager, or give the store the manager of the "
                    + "calling transaction (one transaction manager for both is simplest). The write did not run");
        }
        if (!TransactionSynchronizationManager.hasResource(transactionResource)) {
            throw new OutsideTransactionException(resource, token, "Fence check for resource '" + resource
                    + "' refused: the calling thread is in a transaction of another transaction manager (another "
                    + "DataSource's, for example a @Transactional naming another manager), which the check on table '"
                    + table + "' cannot join: checked in a transaction of its own, the check would commit apart from "
                    + "the method's writes. If the method writes to the other manager's DataSource, fence it with a "
                    + "store on that DataSource (a RoutingFenceStore route, say, or give this store that DataSource "
                    + "and transaction manager with JdbcFenceStore.builder); if it writes to the store's DataSource, "
                    + "run it in a transaction of the store's DataSource. The write did not run");
        }
        if (connectionResource != null && !TransactionSynchronizationManager.hasResource(connectionResource)) {
            throw new OutsideTransactionException(resource, token, "Fence check for resource '" + resource
                    + "' refused: the calling thread's transaction holds no connection of the store's DataSource, "
                    + "so the check on table '" + table + "' would run on a connection of its own, in autocommit, "
                    + "apart from the method's writes (a JPA or Hibernate transaction manager with no DataSource, or "
                    + "another one's). Give the store the transaction manager of its own DataSource. The write did "
                    + "not run");
        }
        if (TransactionSynchronizationManager.isCurrentTransactionReadOnly()) {
            throw new OutsideTransactionException(resource, token, "Fence check for resource '" + resource
                    + "' refused: the calling thread is in a read-only transaction (@Transactional(readOnly = true), "
                    + "say), in which the check on table '" + table + "' cannot record the token: it advances "
                    + "max_seen, a write, also for a fenced read. Run the fenced call in a read-write transaction. "
                    + "The call did not run");
        }
        Integer isolation = compacted && dialect.fenceSql() != FenceSql.MARIADB
                ? TransactionSynchronizationManager.getCurrentTransactionIsolationLevel() : null;
        if (isolation != null && isolation > Connection.TRANSACTION_READ_COMMITTED) {
            throw new OutsideTransactionException(resource, token, "Fence check for resource '" + resource
                    + "' refused: the calling thread's transaction runs at isolation level "
                    + (isolation == Connection.TRANSACTION_SERIALIZABLE ? "SERIALIZABLE" : "REPEATABLE READ")
                    + " and table '" + table + "' is compacted: on " + dialect.productName() + " a snapshot taken "
                    + "before a compaction batch reads the family floor as it was, and a paused holder's token for "
                    + "a resource that batch folded could be accepted. Run fenced calls at READ COMMITTED (the "
                    + "database's default), or turn compaction off (fencing.compaction.enabled). The call did not "
                    + "run");
        }
    }

    /** A compaction of this store's table ran ({@link JdbcFenceAdmin#compact}): see {@link Builder#compacted}. */
    void noteCompacted() {
        compacted = true;
    }

    /**
     * Under a transaction manager that binds no DataSource (JTA, which enlists connections in its transactions
     * instead): refuses a check whose connection is in autocommit, a DataSource not enlisted in the transaction (a
     * plain pool beside a JTA manager). The check would commit at once and release the resource's row, apart from the
     * write, and a write checked with an older token could land after a newer one's. One {@code getAutoCommit()} per
     * check (the pool and the drivers answer it without a round trip), for such managers only.
     */
    private void requireEnlistedConnection(String resource, FencingToken token) {
        Boolean autoCommit = jdbc.execute((org.springframework.jdbc.core.ConnectionCallback<Boolean>)
                java.sql.Connection::getAutoCommit);
        if (Boolean.TRUE.equals(autoCommit)) {
            throw new OutsideTransactionException(resource, token, "Fence check for resource '" + resource
                    + "' refused: the store's transaction manager ("
                    + transactions.getTransactionManager().getClass().getSimpleName() + ") binds no DataSource, and "
                    + "the connection the check on table '" + table + "' would run on is in autocommit: the store's "
                    + "DataSource is not enlisted in the transaction (a plain pool beside a JTA transaction manager), "
                    + "so the check would commit at once, apart from the method's writes. Enlist the DataSource in "
                    + "JTA (an XA or JTA-aware pool of the transaction manager's), or give the store the "
                    + "DataSourceTransactionManager of its own DataSource. The write did not run");
        }
    }

    /**
     * This store's checks of the current transaction, registered with it on the first fenced call. Found among the
     * transaction's synchronizations (not bound as a resource), so that a transaction suspended by
     * {@code REQUIRES_NEW} keeps its own.
     */
    private CommitChecks commitChecks(String resource, FencingToken token) {
        if (!TransactionSynchronizationManager.isSynchronizationActive()
                || !TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new FenceStoreException(resource, token, "Fence check at commit for resource '" + resource
                    + "' refused: the transaction has no transaction synchronization, so the check cannot be sent "
                    + "with its commit; the write did not run", null);
        }
        for (TransactionSynchronization synchronization : TransactionSynchronizationManager.getSynchronizations()) {
            if (synchronization instanceof CommitChecks checks && checks.store() == this) {
                return checks;
            }
        }
        for (Object held : TransactionSynchronizationManager.getResourceMap().values()) {
            String type = held.getClass().getName();
            if ((type.endsWith(".EntityManagerHolder") || type.endsWith(".SessionHolder"))
                    && !(held instanceof ResourceHolderSupport holder && !holder.isSynchronizedWithTransaction())) {
                // JPA/Hibernate flush at their commit, after the synchronizations: those writes would follow COMMIT.
                // An entity manager only opened for the request (open-in-view), not joined to this transaction,
                // flushes nothing at its commit: it is no reason to refuse.
                throw new OutsideTransactionException(resource, token, "Fence check at commit for resource '"
                        + resource + "' refused: the transaction is a JPA or Hibernate one (" + type + "), whose "
                        + "pending writes are flushed after the check would have committed; use the default mode "
                        + "(checkAtCommit(false)) with JPA. The write did not run");
            }
        }
        if (inSynchronizationCallback()) {
            return null; // the transaction's first fenced call, made while it completes: checked at once
        }
        CommitChecks checks = new CommitChecks(this);
        TransactionSynchronizationManager.registerSynchronization(checks);
        return checks;
    }

    /**
     * Whether this thread runs a transaction synchronization's callback ({@code beforeCommit},
     * {@code beforeCompletion}, {@code afterCommit}, {@code afterCompletion}: Spring calls each through
     * {@code TransactionSynchronizationUtils}). Checks queued from there could miss the commit they wait for (Spring
     * calls a synchronization registered during a phase in the next phase only), so such a call is checked at once.
     * Asked once per transaction, by its first fenced call.
     */
    private static boolean inSynchronizationCallback() {
        return StackWalker.getInstance().walk(frames -> frames.anyMatch(frame ->
                frame.getClassName().equals(SYNCHRONIZATION_UTILS)));
    }

    private static final String SYNCHRONIZATION_UTILS =
            "org.springframework.transaction.support.TransactionSynchronizationUtils";

    private String atCommitSql(int checks, boolean commit) {
        if (commit && checks <= CACHED_BATCHES && atCommitSql[checks] != null) {
            return atCommitSql[checks];
        }
        return dialect.fenceSql().checksAtCommitSql(table, dialect.lockTimeoutValue(lockTimeout), maxAdvance,
                checks, commit);
    }

    /** Whether this store checks tokens at commit ({@link Builder#checkAtCommit(boolean)}). */
    public boolean checksAtCommit() {
        return checkAtCommit;
    }

    /**
     * Why this store cannot check at commit in an application whose transactions {@code applicationManager} runs, or
     * {@code null} when it can (or does not check at commit). A store given no transaction manager of its own joins
     * whatever transaction runs on its data source, and under a JPA or Hibernate manager, whose writes are flushed
     * after the check's COMMIT, it refuses every fenced call; asked once at startup (the Spring Boot starter does), so
     * that this fails there. A store given a {@link DataSourceTransactionManager} has nothing to answer here.
     */
    public String atCommitProblem(PlatformTransactionManager applicationManager) {
        if (!checkAtCommit || applicationManager == null || applicationManager instanceof DataSourceTransactionManager
                || !(transactions.getTransactionManager() instanceof JoiningDataSourceTransactionManager)) {
            return null;
        }
        return notJdbcTransactions(" on table '" + table + "'", "application's transaction manager",
                applicationManager) + "; when the fenced methods run in transactions of a DataSourceTransactionManager "
                + "that is not the primary one, give it to JdbcFenceStore.builder(..).transactionManager(..)";
    }

    /** Why checking at commit refuses {@code manager}, which is not a JDBC transaction manager, and what to do. */
    private static String notJdbcTransactions(String where, String what, PlatformTransactionManager manager) {
        return "JdbcFenceStore checkAtCommit(true)" + where + " needs JDBC transactions (a "
                + "DataSourceTransactionManager or JdbcTransactionManager), and the " + what + " is "
                + manager.getClass().getName() + ", whose writes may be flushed after the check's COMMIT, so every "
                + "fenced call in its transactions would be refused; write through JdbcTemplate or Spring Data JDBC "
                + "with a DataSourceTransactionManager, or remove checkAtCommit (fencing.store.jdbc.check-at-commit) "
                + "to check before the method body";
    }

    /** {@code true} when checking at commit: observe mode is then refused at startup. */
    @Override
    public boolean judgesAtCommit() {
        return checkAtCommit;
    }

    /**
     * Sends the checks of one transaction, in one round trip with its {@code COMMIT}, as the transaction's last
     * {@code beforeCommit}. Ordered last; when another synchronization still follows it (it may write in its own
     * {@code beforeCommit}), the checks go without {@code COMMIT} and the transaction commits as usual, one round
     * trip later.
     */
    /**
     * A resource fenced twice in one transaction checking at commit: the shape of a fenced read and its write, which
     * this mode does not order (docs/stores.md). Said once per store, at WARN: it may be two writes, which are fine.
     */
    private void warnOfRepeat(String resource) {
        if (!warnedOfRepeat) {
            warnedOfRepeat = true;
            LOG.warn("Resource '" + FencingToken.printable(resource) + "' was fenced twice in one transaction by a "
                    + "store checking at commit (table '" + table + "'). If the first call reads what a later one "
                    + "writes, that read is not ordered in this mode: a zombie's write can commit between it and "
                    + "this transaction's commit and be lost. Keep read-modify-writes in the default mode, compute "
                    + "the value in the write statement, or use REPEATABLE READ on PostgreSQL (docs/stores.md, "
                    + "\"Checking at commit\"). Said once for this store");
        }
    }

    /** Whether {@link #warnOfRepeat} has spoken (tests). */
    boolean warnedOfRepeat() {
        return warnedOfRepeat;
    }

    private static final class CommitChecks implements TransactionSynchronization {
        private final JdbcFenceStore store;
        private final List<Pending> pending = new ArrayList<>(2);
        /** Whether the checks went without COMMIT: their verdict is reported once the transaction commits. */
        private boolean acceptedAtCommit;
        /** Whether the checks went: a later fenced call of the transaction is checked at once. */
        private boolean sent;

        CommitChecks(JdbcFenceStore store) {
            this.store = store;
        }

        JdbcFenceStore store() {
            return store;
        }

        void add(String resource, FencingToken token, DeferredVerdict verdict) {
            if (!store.warnedOfRepeat) {
                for (Pending earlier : pending) {
                    if (earlier.resource().equals(resource)) {
                        store.warnOfRepeat(resource);
                        break;
                    }
                }
            }
            pending.add(new Pending(resource, token, verdict));
        }

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }

        boolean sent() {
            return sent;
        }

        @Override
        public void beforeCommit(boolean readOnly) {
            if (pending.isEmpty()) {
                return;
            }
            List<TransactionSynchronization> all = TransactionSynchronizationManager.getSynchronizations();
            boolean last = all.get(all.size() - 1) == this;
            send(last);
        }

        private void send(boolean commit) {
            sent = true;
            // one order of row locks for every transaction checking at commit: no deadlock among them
            pending.sort(Comparator.comparing(Pending::resource));
            store.sendChecks(pending, commit);
            if (commit) {
                acceptedAtCommit = false;
                accepted();                        // COMMIT ran in the same round trip
            } else {
                acceptedAtCommit = true;           // the transaction's own commit is still to come
            }
        }

        /**
         * Nothing is sent from {@code beforeCompletion}: Spring calls it on the way to a rollback too (a body that
         * threw, a caller that threw after the fenced call, a transaction marked rollback-only), where checks sent
         * would reach a verdict for writes that are rolled back (counted, heard by the rejection listener) and wait
         * for a fence row another transaction holds. A commit always calls {@link #beforeCommit} first: a
         * transaction's first fenced call made inside a synchronization callback is checked at once
         * ({@link #inSynchronizationCallback}), so no {@code CommitChecks} is registered after the commit's
         * {@code beforeCommit} began. Should one ever be, {@link #afterCompletion} names its checks at ERROR.
         */
        @Override
        public void afterCommit() {
            if (acceptedAtCommit) {
                accepted();
            }
        }

        /** Checks never sent: their writes may have committed without them. Said at ERROR, nothing else can now. */
        @Override
        public void afterCompletion(int status) {
            if (!sent && !pending.isEmpty() && status == STATUS_COMMITTED) {
                LOG.error("Fenced writes on table '" + store.table + "' may have committed WITHOUT their check at "
                        + "commit: " + pending.stream().map(p -> "'" + FencingToken.printable(p.resource())
                        + "' (token " + p.token() + ")").collect(java.util.stream.Collectors.joining(", "))
                        + ". Their fenced calls came after the transaction's last callback before its commit; make "
                        + "fenced calls in the transaction's body, or use the default mode (checkAtCommit(false))");
            }
        }

        private void accepted() {
            for (Pending check : pending) {
                check.verdict.accepted();
            }
        }
    }

    private record Pending(String resource, FencingToken token, DeferredVerdict verdict) {
    }

    /**
     * Sends {@code checks} (and {@code COMMIT} when {@code commit}) in one statement text, one round trip; more than
     * {@value #MAX_CHECKS_PER_TEXT} checks in several texts, in order, {@code COMMIT} with the last (a driver takes
     * at most 65,535 parameters in one statement, and a check has 7): a rejection in any of them aborts the
     * transaction, so none of it commits.
     */
    private void sendChecks(List<Pending> checks, boolean commit) {
        for (int from = 0; from < checks.size(); from += MAX_CHECKS_PER_TEXT) {
            int to = Math.min(checks.size(), from + MAX_CHECKS_PER_TEXT);
            sendText(checks.subList(from, to), commit && to == checks.size());
        }
    }

    /** The most checks one statement text carries ({@link #sendChecks}). */
    private static final int MAX_CHECKS_PER_TEXT = 1_000;

    /** Sends {@code checks} (and {@code COMMIT} when {@code commit}) in one statement text, one round trip. */
    private void sendText(List<Pending> checks, boolean commit) {
        DataSource dataSource = Objects.requireNonNull(jdbc.getDataSource());
        Connection connection = DataSourceUtils.getConnection(dataSource);
        try (PreparedStatement ps = connection.prepareStatement(atCommitSql(checks.size(), commit))) {
            int next = 1;
            for (Pending check : checks) {
                Object[] parameters = dialect.fenceSql().atCommitParameters(check.resource(), check.token().value(),
                        check.token().holder());
                ensureFloorRow(parameters);
                next = bind(ps, next, parameters);
            }
            ps.execute();
        } catch (SQLException e) {
            throw checksFailed(checks, e, commit);
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }

    /**
     * What the failed batch of checks means: a rejection (the check that raised it names its place and max_seen),
     * a lock wait or a serialization failure/deadlock (counted on the first check, the database does not say which
     * one waited), a violated deferred constraint (SQLSTATE class 23: the transaction's own data failed at
     * {@code COMMIT}, not a check; Spring's translation, not counted), or any other failure, which left the checks
     * without a verdict (the connection lost, a read-only transaction): a {@link FenceStoreException}, counted
     * {@code error} on the first check as the default mode counts a check that could not run. Either way the
     * transaction is aborted and rolls back, except when the connection failed with {@code COMMIT} in the text
     * (SQLSTATE class 08): the server may have committed before the answer was lost, and the message says so.
     */
    private RuntimeException checksFailed(List<Pending> checks, SQLException e, boolean commit) {
        long[] rejected = FenceSql.rejectedAtCommit(e.getMessage());
        if (rejected != null && rejected[0] < checks.size()) {
            Pending check = checks.get((int) rejected[0]);
            long maxSeen = rejected[1];
            long value = check.token().value();
            Verdict verdict = maxSeen > value ? Verdict.REJECT_STALE
                    : maxSeen < value ? Verdict.REJECT_OUT_OF_RANGE : Verdict.REJECT_DUPLICATE;
            return check.verdict().failed(TokenRejectedException.of(check.resource(), check.token(), maxSeen,
                    verdict).afterBody(true));
        }
        Pending first = checks.get(0);
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        if (state.equals("55P03")) {
            return first.verdict().failed(new FenceBusyException(first.resource(), first.token(), "Fence check at "
                    + "commit for resource '" + first.resource() + "' (token " + first.token() + ") waited more than "
                    + lockTimeout.toMillis() + " ms for a fence row in table '" + table + "' held by another "
                    + "transaction; the transaction rolled back, retry later: " + e.getMessage(), e, true));
        }
        if (state.startsWith("40")) {
            return first.verdict().failed(new FenceConflictException(first.resource(), first.token(), "Fence check "
                    + "at commit for resource '" + first.resource() + "' (token " + first.token() + ") was aborted "
                    + "by the database as a serialization failure or deadlock; the transaction rolled back, retry "
                    + "it: " + e.getMessage(), e, true));
        }
        if (state.startsWith("23")) {
            DataAccessException translated = jdbc.getExceptionTranslator().translate("fence checks at commit", null,
                    e);
            if (translated != null) {
                return translated;
            }
        }
        String which = "resource '" + first.resource() + "' (token " + first.token() + ")"
                + (checks.size() > 1 ? " and " + (checks.size() - 1) + " more" : "");
        if (commit && state.startsWith("08")) {
            return first.verdict().failed(new FenceStoreException(first.resource(), first.token(),
                    "Fence checks at commit of " + which + " in table '" + table + "' and the COMMIT sent with them "
                            + "got no answer (the connection failed, SQLSTATE " + state + "): whether the transaction "
                            + "committed is not known here, so take its writes as neither done nor undone and read "
                            + "them back before retrying: " + e.getMessage(), e));
        }
        return first.verdict().failed(new FenceStoreException(first.resource(), first.token(),
                "Fence checks at commit of " + which + " in table '" + table + "' could not run, so no verdict was "
                        + "reached; the transaction rolled back: " + e.getMessage(), e));
    }

    /**
     * The commit of the transaction this store opened failed after the check accepted and the write ran: neither
     * may be taken as done. A serialization failure or deadlock is retryable; a violated constraint (a deferred one,
     * or a JPA flush at commit) is the write's own failure, as if the body had thrown it: Spring's translation, as
     * at commit in {@link Builder#checkAtCommit check-at-commit} mode; anything else is an error.
     */
    private RuntimeException commitFailed(String resource, FencingToken token, RuntimeException e) {
        DataAccessException translated = translate("commit", e);
        if (translated instanceof DataIntegrityViolationException) {
            return translated;
        }
        if (translated instanceof ConcurrencyFailureException) { // no lock waits at commit: 40001, 40P01
            return new FenceConflictException(resource, token, "The fenced transaction of resource '" + resource
                    + "' (token " + token + ") was aborted at commit as a serialization failure or deadlock; "
                    + "neither the check nor the write persisted, and the operation may be retried: "
                    + databaseMessage(e), e, true);
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
        SQLException sql = sqlCause(e);
        return sql == null ? null : jdbc.getExceptionTranslator().translate(task, null, sql);
    }

    /**
     * Finds the resource's row, in the transaction, at one of {@code tokens} (its max_seen and holder), the tokens
     * the transaction checked for a resource it presented several tokens for ({@link HeldChecks}), {@code when}.
     *
     * @throws FenceConflictException when it is not: the database rolled back those checks (a deadlock the method
     *                                body caught), or a savepoint did
     */
    void confirmAt(String resource, Set<FencingToken> tokens, String when) {
        // a locking read: the row as it is now, not the transaction's snapshot (a body that read something after
        // the deadlock has one from then, older than a newer token's commit)
        FencingToken last = tokens.stream().max(Comparator.comparingLong(FencingToken::value)).orElseThrow();
        List<Row> rows;
        try {
            rows = jdbc.query(dialect.fenceSql().boundedByItself("SELECT max_seen, holder FROM " + table
                            + " WHERE resource = ? FOR UPDATE", lockTimeout),
                    (rs, i) -> new Row(rs.getLong(1), rs.getString(2)), resource);
        } catch (CannotAcquireLockException e) {
            if (rolledBack(e)) {
                throw conflict(resource, last, e);
            }
            throw new FenceBusyException(resource, last, "Fence checks for resource '" + resource + "', looked at "
                    + "again " + when + ", waited more than " + lockTimeout.toMillis() + " ms for the resource's "
                    + "fence row in table '" + table + "', held by another transaction; the write did not run, retry "
                    + "later: " + databaseMessage(e), e);
        } catch (ConcurrencyFailureException e) {
            throw conflict(resource, last, e);
        }
        Row row = rows.isEmpty() ? null : rows.get(0);
        for (FencingToken token : tokens) {
            if (row != null && row.maxSeen == token.value() && token.holder().equals(row.holder)) {
                return;
            }
        }
        throw new FenceConflictException(resource, last, "Fence checks for resource '"
                + FencingToken.printable(resource) + "' (tokens " + tokens.stream().map(FencingToken::value).sorted()
                .toList() + "), looked at again " + when + ", were lost: " + (row == null ? "the resource has no row"
                : "the row is at " + row.maxSeen + " (holder '" + row.holder + "')") + ", not at a token the "
                + "transaction checked. The database rolled back the transaction that made the checks (a deadlock, "
                + "caught in the method body, which went on in a new transaction without the fence), or a savepoint "
                + "undid them; its writes since are refused: let such errors leave the fenced method and retry the "
                + "whole transaction", null, true);
    }

    /** Whether {@code other} checks on the same rows: the same DataSource and table. */
    boolean sharesRowsWith(JdbcFenceStore other) {
        return other == this || other.dataSourceKey == dataSourceKey && other.table.equals(table);
    }

    /**
     * Runs a check the transaction passed ({@link HeldChecks}) again, in it, {@code when} (before its commit), with the
     * last token it checked for the resource: one still in force is its own holder's (no change); one the database
     * undid (a rolled-back savepoint) takes the row again; one whose row a newer token took meanwhile (the database
     * rolled back the whole transaction, a deadlock caught in the method body, which went on in a new transaction
     * without the fence) refuses the commit as a {@link FenceConflictException}.
     */
    void checkAgain(String resource, FencingToken token, String when) {
        try {
            check(resource, token, false);
        } catch (TokenRejectedException rejected) {
            throw new FenceConflictException(resource, token, "Fence check for resource '"
                    + FencingToken.printable(resource) + "' (token " + token + "), run again " + when
                    + ", was refused: " + rejected.getMessage() + ". The database rolled back the "
                    + "transaction that made the first check (a deadlock, caught in the method body, which went on "
                    + "in a new transaction without the fence), so its writes since are refused; let such errors "
                    + "leave the fenced method and retry the whole transaction", rejected, true);
        }
    }

    /** Checks {@code token}; a {@code probe} (the table verifier's, rolled back) leaves no floor row behind. */
    private void check(String resource, FencingToken token, boolean probe) {
        String previousLockTimeout = null;
        if (!checkBoundsItself) {
            try {
                previousLockTimeout = swapInLockTimeout();
            } catch (DataAccessException e) {
                throw new FenceStoreException(resource, token, "Fence check for resource '" + resource
                        + "' could not bound its lock wait: " + e.getMessage(), e);
            }
        }
        Row row;
        boolean ran = false;
        try {
            row = runCheck(resource, token, probe);
            ran = true;
        } finally {
            if (previousLockTimeout != null && (ran || dialect.restoresLockTimeoutAfterFailure())) {
                restoreLockTimeout(resource, token, previousLockTimeout, ran);
            }
        }
        if (row.maxSeen == token.value() && token.holder().equals(row.holder)) {
            return;
        }
        // the statement left max_seen below the token only when the bound refused it
        Verdict verdict = row.maxSeen > token.value() ? Verdict.REJECT_STALE
                : row.maxSeen < token.value() ? Verdict.REJECT_OUT_OF_RANGE : Verdict.REJECT_DUPLICATE;
        throw TokenRejectedException.of(resource, token, row.maxSeen, verdict);
    }

    /**
     * Sets the connection's lock wait bound to this store's {@code lockTimeout} where the database bounds locks around
     * statements (PostgreSQL, transaction-local; H2, the session's); returns the bound it replaced, to put back with
     * {@link JdbcDialect#setLockTimeoutSql(String)} (after a failed statement too where
     * {@link JdbcDialect#restoresLockTimeoutAfterFailure()}), or {@code null} where the statement bounds itself
     * (MariaDB).
     */
    String swapInLockTimeout() {
        if (readLockTimeoutSql == null) {
            return null;
        }
        if (swapLockTimeoutSql != null) {
            return jdbc.queryForObject(swapLockTimeoutSql, (rs, n) -> rs.getString(1));
        }
        String previous = jdbc.queryForObject(readLockTimeoutSql, String.class);
        jdbc.execute(setLockTimeoutSql);
        return previous;
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
                + "run, retry the transaction: " + databaseMessage(e), e);
    }

    /**
     * Whether the statement was cancelled by the connection's statement timeout: PostgreSQL's {@code statement_timeout}
     * (SQLSTATE 57014, which a cancel request also raises), MariaDB's {@code max_statement_time} (error 1969). A wait
     * the caller bounded below the check's own, or a slow database: retryable either way, never a verdict.
     */
    private static boolean statementTimedOut(DataAccessException e) {
        SQLException sql = sqlCause(e);
        return sql != null && ("57014".equals(sql.getSQLState()) || sql.getErrorCode() == MARIADB_STATEMENT_TIMEOUT);
    }

    /** The driver's exception behind {@code e}: the first {@link SQLException} among its causes, or {@code null}. */
    private static SQLException sqlCause(RuntimeException e) {
        for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sql) {
                return sql;
            }
        }
        return null;
    }

    /**
     * Whether the database rolled the statement's transaction back (SQLSTATE class 40: serialization failure,
     * deadlock). Spring translates SQLSTATE 40001 without a vendor code (H2's deadlock) to
     * {@link CannotAcquireLockException} too, which otherwise means a lock wait timeout (55P03, MariaDB 1205, H2
     * 50200).
     */
    private static boolean rolledBack(DataAccessException e) {
        SQLException sql = sqlCause(e);
        return sql != null && sql.getSQLState() != null && sql.getSQLState().startsWith("40");
    }

    private Row runCheck(String resource, FencingToken token, boolean probe) {
        // a resource without a family has no floor: its check reads none
        boolean family = ResourceFamily.has(resource);
        Object[] parameters = family
                ? dialect.fenceSql().checkParameters(resource, token.value(), token.holder())
                : FenceSql.familylessCheckParameters(resource, token.value(), token.holder());
        if (family && !probe) {
            ensureFloorRow(parameters);
        }
        for (int attempt = 1; ; attempt++) {
            Row row;
            try {
                String sql = family ? checkSql : familylessCheckSql;
                row = checkIsSecondResult ? secondResult(sql, parameters)
                        : jdbc.query(sql, ps -> bind(ps, parameters),
                                rs -> rs.next() ? new Row(rs.getLong(1), rs.getString(2)) : null);
            } catch (DuplicateKeyException e) {
                // another transaction inserted the resource's first row concurrently (H2's MERGE does not absorb
                // that as ON CONFLICT does): the statement, run again, takes the update path and its row lock
                if (!dialect.retriesFirstInsertRace() || attempt >= 3) {
                    // still there after the retries (a REPEATABLE READ or SERIALIZABLE snapshot from before that row
                    // never sees it): a race with another first check, retryable as the transaction, as a deadlock is
                    throw new FenceConflictException(resource, token, "Fence check for resource '" + resource
                            + "' (token " + token + ") raced another transaction's first check of it, which inserted "
                            + "its row in table '" + table + "' after this transaction's snapshot; the write did not "
                            + "run, retry the transaction: " + databaseMessage(e), e);
                }
                continue;
            } catch (CannotAcquireLockException e) {
                if (rolledBack(e)) {
                    throw conflict(resource, token, e);
                }
                throw new FenceBusyException(resource, token, "Fence check for resource '" + resource + "' (token "
                        + token + ") waited more than " + lockTimeout.toMillis() + " ms for the resource's fence "
                        + "row in table '" + table + "', " + (TransactionOrigins.inFencedBodyOf(resource)
                        ? "held by this thread's own transaction, suspended while it runs the body of a fenced call on "
                        + "the same resource: this check runs in a transaction of its own (REQUIRES_NEW; a repository "
                        + "fragment's own @Transactional, say), which waits for itself; make the inner call join the "
                        + "caller's transaction: " : "held by another transaction (a writer still inside its fenced "
                        + "body, or a paused one); the write did not run, retry later: ") + databaseMessage(e), e);
            } catch (ConcurrencyFailureException e) {
                throw conflict(resource, token, e);
            } catch (DataAccessException e) {
                if (statementTimedOut(e)) {
                    throw new FenceBusyException(resource, token, "Fence check for resource '" + resource + "' (token "
                            + token + ") was cancelled by the connection's statement timeout (PostgreSQL "
                            + "statement_timeout, MariaDB max_statement_time), shorter than the check's lock wait "
                            + "bound of " + lockTimeout.toMillis() + " ms or the database's answer; the write did not "
                            + "run, retry later: " + databaseMessage(e), e);
                }
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

    /** MariaDB: has the floor row of the family whose key is the check's fourth parameter created, if it has one. */
    private void ensureFloorRow(Object[] checkParameters) {
        if (floorRows != null && checkParameters[3] != null) {
            floorRows.ensure((String) checkParameters[3]);
        }
    }

    /** MariaDB: whether this store created or found the floor row of {@code family} (for tests). */
    boolean hasFloorRow(String family) {
        return floorRows != null && floorRows.exists(FenceSql.familyFloorKey(family));
    }

    /** PostgreSQL: runs the bound's query, the check and the restore as one text; the check's row is the second. */
    private Row secondResult(String sql, Object[] parameters) {
        return jdbc.execute(sql, (PreparedStatementCallback<Row>) ps -> {
            bind(ps, parameters);
            ps.execute();
            if (!ps.getMoreResults()) {
                return null;
            }
            try (ResultSet rs = ps.getResultSet()) {
                return rs.next() ? new Row(rs.getLong(1), rs.getString(2)) : null;
            }
        });
    }

    /** Binds {@code parameters} ({@link FenceSql#checkParameters}: texts, some null, and longs) in order, typed. */
    static void bind(PreparedStatement ps, Object[] parameters) throws SQLException {
        bind(ps, 1, parameters);
    }

    /** {@link #bind(PreparedStatement, Object[])} from the parameter at {@code first}; returns the one after them. */
    private static int bind(PreparedStatement ps, int first, Object[] parameters) throws SQLException {
        int next = first;
        for (Object parameter : parameters) {
            if (parameter instanceof Long value) {
                ps.setLong(next++, value);
            } else {
                ps.setString(next++, (String) parameter);
            }
        }
        return next;
    }

    /**
     * The DataSource the checks run on: a fenced write joins the check's transaction only on a connection Spring
     * binds for it (or for the pool a {@code TransactionAwareDataSourceProxy} wraps).
     */
    public DataSource dataSource() {
        return Objects.requireNonNull(jdbc.getDataSource());
    }

    /** The dialect detected (or configured) at build time. */
    public JdbcDialect dialect() {
        return dialect;
    }

    /** The table name, as configured. */
    public String table() {
        return table;
    }

    /** How far one token may move a resource's max_seen; {@link FenceRule#UNBOUNDED} when not bounded (default). */
    public long maxAdvance() {
        return maxAdvance;
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
     * {@code resource} (see {@link TableVerifier}). Idempotent and thread-safe; a failed verification is repeated on
     * the next call. Warns, once per store, when no transaction manager is {@linkplain TransactionOrigins listened
     * to}: a transaction of another data source nested inside one of the store's would then go unseen.
     *
     * @throws FencingConfigurationException naming the table, the column and the fix
     */
    @Override
    public void verify() {
        verifyTable();
        if (!guarded) {
            listenToTransactionManagers();
        }
        if (!guarded && transactionResource != null && !TransactionOrigins.listening()) {
            // without a Spring context (no bean factory) only the application knows whether it runs transactions of
            // other managers: said at INFO, with the call that covers them
            if (beanFactory == null) {
                LOG.info(notListenedTo(table, false));
            } else {
                LOG.warn(notListenedTo(table, true));
            }
        }
        guarded = true;
    }

    /**
     * What {@link #verify()} says when no transaction manager is listened to: in a Spring context, the bean that
     * registers the listener; outside one, only the call, which matters only when the thread also runs transactions of
     * other managers.
     */
    static String notListenedTo(String table, boolean springContext) {
        String said = "JdbcFenceStore on table '" + table + "': no transaction manager is listened to "
                + "(TransactionOrigins), so a fenced call in a transaction of another manager nested inside a "
                + "transaction of the store's DataSource is not refused: the check would join the outer transaction "
                + "while the method's writes commit with the inner one. ";
        if (springContext) {
            return said + "The Spring Boot starter (for its JdbcFenceStore bean) and @EnableFencing (for a store "
                    + "behind a route of its RoutingFenceStore bean) register the listener; for another store that "
                    + "is not a bean, declare @Bean static BeanPostProcessor fencingTransactionOrigins() { return "
                    + "TransactionOrigins.beanPostProcessor(); } or call TransactionOrigins.listenTo(manager, name) "
                    + "for each transaction manager";
        }
        return said + "Outside a Spring context this matters only when this thread also runs transactions of other "
                + "managers: then call TransactionOrigins.listenTo(manager, name) once for each transaction manager "
                + "your code begins transactions with";
    }

    /** Checks the table without counting as a guard using the store (its own startup, first check, admin tasks). */
    void verifyTable() {
        verifier.verify();
    }

    /** The admin {@link #compact} and {@link #familyFloor} delegate to: one per store, built with it. */
    JdbcFenceAdmin admin() {
        return admin;
    }

    /** The template the check runs on, for {@link JdbcFenceAdmin}. */
    JdbcTemplate jdbc() {
        return jdbc;
    }

    /** Transactions that join the caller's (or open one), for {@link JdbcFenceAdmin}. */
    TransactionTemplate transactions() {
        return transactionsNow();
    }

    /**
     * The transactions a check runs in now: the store's manager's, or, when that is a plain
     * {@link DataSourceTransactionManager} and the calling thread is in a transaction another manager (JPA's,
     * Hibernate's) runs on a connection of the store's DataSource, ones that join it. Such a manager binds that
     * connection without marking it as a JDBC transaction (nor as one {@code DataSourceUtils} bound for a statement),
     * and a plain manager would begin a transaction of its own on it and commit it when the check returns: the check
     * and the body's flushed writes so far, before the caller's transaction decides, and its row lock released early.
     */
    private TransactionTemplate transactionsNow() {
        if (joiningForeign != null && TransactionSynchronizationManager.isActualTransactionActive()
                && TransactionSynchronizationManager.getResource(dataSource) instanceof ConnectionHolder held
                && !held.isSynchronizedWithTransaction()) {
            return joiningForeign;
        }
        return transactions;
    }

    /**
     * The check-and-advance statement with this store's lock wait bound and without the bound on one advance, for
     * {@link JdbcFenceAdmin#raiseFloor}.
     */
    String floorSql() {
        return floorSql;
    }

    /**
     * Once every singleton of the application context exists: {@linkplain TransactionOrigins#listenTo listens to}
     * every transaction manager bean, verifies the table (after database initialization), and fails the startup when
     * the context has beans with {@code @Fenced} methods but no {@code @EnableFencing}: before any lifecycle bean (a
     * listener container, the web server) starts, so none of those writes runs unchecked first.
     */
    @Override
    public void afterSingletonsInstantiated() {
        listenToTransactionManagers();
        warnOfDefaultManagerBesideJpa();
        verifyTable();
        requireGuard();
    }

    /**
     * A store built without a transaction manager in an application whose primary one is JPA's or Hibernate's: a
     * fenced call made outside a transaction runs in a JDBC transaction the store opens, inside which a JPA
     * {@code @Transactional} (a repository's save) cannot begin ("Already value [ConnectionHolder] ... bound to
     * thread"): said at startup, with the fix.
     */
    private void warnOfDefaultManagerBesideJpa() {
        if (!(transactions.getTransactionManager() instanceof JoiningDataSourceTransactionManager)
                || !(beanFactory instanceof ListableBeanFactory beans)) {
            return;
        }
        PlatformTransactionManager primary;
        try {
            primary = beans.getBeanProvider(PlatformTransactionManager.class).getIfUnique();
        } catch (RuntimeException e) {
            return; // no single primary one: nothing to name
        }
        if (primary != null && !(primary instanceof DataSourceTransactionManager)
                && ManagedDataSources.mismatch(primary, dataSource) == null) {
            LOG.warn("JdbcFenceStore on table '" + table + "' was built without a transaction manager, and the "
                    + "application's is " + primary.getClass().getName() + ": a fenced call made outside a "
                    + "transaction runs in a JDBC transaction the store opens, in which that manager's own "
                    + "@Transactional (a JPA repository's save) cannot begin. Give the store that manager: "
                    + "JdbcFenceStore.builder(dataSource).transactionManager(it)");
        }
    }

    private void listenToTransactionManagers() {
        if (beanFactory instanceof ListableBeanFactory beans) {
            beans.getBeansOfType(PlatformTransactionManager.class, false, false)
                    .forEach((name, manager) -> TransactionOrigins.listenTo(manager, "'" + name + "'"));
        }
    }

    /**
     * The bean factory whose transaction manager beans {@link #verify()} and {@link #afterSingletonsInstantiated()}
     * {@linkplain TransactionOrigins#listenTo listen to}, and whose {@code @Fenced} beans {@link #requireGuard()}
     * looks for. Spring sets it on a store bean; {@code @EnableFencing}'s startup check also sets it, before it
     * verifies the store, on a store that is no bean behind a route of the application's {@code RoutingFenceStore}
     * bean: without it such a store would not see the other managers' transactions, and a fenced call in one of them
     * nested inside a transaction of the store's DataSource would not be refused (with the Spring Boot starter its
     * {@link TransactionOrigins#beanPostProcessor()} covers every store; with {@code @EnableFencing} alone this is what
     * covers the routed ones). A callback, not a class name: fencing-spring knows nothing of this module.
     */
    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    /**
     * The check of {@link #afterSingletonsInstantiated()} for a store bean that was not created with the singletons (a
     * lazy one, which the context creates to hand it this event): fails the context's startup when it has beans with
     * {@code @Fenced} methods but {@code @EnableFencing} is missing.
     */
    @Override
    public void onApplicationEvent(ContextRefreshedEvent event) {
        if (!guardChecked && event.getApplicationContext().getAutowireCapableBeanFactory() == beanFactory) {
            requireGuard();
        }
    }

    /**
     * Fails when the context has beans with {@code @Fenced} methods but nothing verified this store, i.e.
     * {@code @EnableFencing} (whose startup check verifies the store) is missing and those writes would run unchecked.
     */
    private void requireGuard() {
        guardChecked = true;
        if (!guarded && beanFactory != null && !UnguardedStoreCheck.fencingEnabled(beanFactory)) {
            UnguardedStoreCheck.requireGuard(beanFactory, "JdbcFenceStore on table '" + table + "'");
        }
    }

    /**
     * The database's own words for a failure, without the SQL text Spring's translated message carries: these
     * messages travel to callers (HTTP problem details); the full exception stays the cause.
     */
    private static String databaseMessage(Throwable e) {
        return NestedExceptionUtils.getMostSpecificCause(e).getMessage();
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
        TokenRejectedException rejected;
        boolean writeStarted;
    }

    /**
     * Configures a {@link JdbcFenceStore}. Defaults: table {@value #DEFAULT_TABLE}, dialect detected from the
     * connection, a {@link DataSourceTransactionManager} on the data source, a lock wait bound of 5 seconds, no table
     * creation, no bound on one advance.
     */
    public static final class Builder extends AbstractTableBuilder<Builder> {
        private PlatformTransactionManager transactionManager;
        private Duration lockTimeout = DEFAULT_LOCK_TIMEOUT;
        private long maxAdvance = FenceRule.UNBOUNDED;
        private boolean checkAtCommit;
        private boolean compacted;

        private Builder(DataSource dataSource) {
            super(JdbcTable.FENCE, dataSource);
        }

        /**
         * The transaction manager whose transactions the check joins (the one your repositories use). Must manage
         * the same data source; defaults to a new {@link DataSourceTransactionManager} on it, which also joins a
         * transaction that another manager (JPA's, Hibernate's) runs on a connection of the data source.
         */
        public Builder transactionManager(PlatformTransactionManager transactionManager) {
            this.transactionManager = Objects.requireNonNull(transactionManager, "transactionManager");
            return this;
        }

        /**
         * How long a check waits for the fence row of a resource that another transaction holds (a writer inside its
         * fenced body, until it commits) before failing with {@link FenceBusyException}; default 5 seconds, at least
         * 1 ms and at most {@link JdbcFenceStore#MAX_LOCK_TIMEOUT}. Longer lets slow fenced transactions queue;
         * shorter frees writers sooner from a paused holder. PostgreSQL: {@code lock_timeout}, set for the check
         * statement only; MariaDB: {@code innodb_lock_wait_timeout} for the check statement, in whole seconds rounded
         * up; H2: the session's {@code LOCK_TIMEOUT}, restored after the check.
         */
        public Builder lockTimeout(Duration lockTimeout) {
            Objects.requireNonNull(lockTimeout, "lockTimeout");
            if (lockTimeout.compareTo(MAX_LOCK_TIMEOUT) > 0) {
                throw new FencingConfigurationException("JdbcFenceStore lockTimeout must be at most "
                        + MAX_LOCK_TIMEOUT.toMillis() + " ms (about 24.8 days: PostgreSQL's lock_timeout and H2's "
                        + "LOCK_TIMEOUT take an int of milliseconds), was " + lockTimeout);
            }
            if (lockTimeout.toMillis() < 1) {
                throw new FencingConfigurationException("JdbcFenceStore lockTimeout must be at least 1 ms, was "
                        + lockTimeout);
            }
            this.lockTimeout = lockTimeout;
            return this;
        }

        /**
         * Bounds how far one token may move a resource's max_seen (off by default): a token more than
         * {@code maxAdvance} above max_seen (or, when its family's floor is higher, above that floor) is refused as
         * {@link dev.fencing.rule.OutOfRangeTokenException} and max_seen stays, decided by the check statement
         * itself. A resource's first token (no row yet) is accepted whatever its value. Size it from the issuer:
         * for the JDBC lease, tokens grow by one per acquire; for ZooKeeper and etcd, by every write of the whole
         * ensemble or cluster (see docs/operations.md).
         *
         * @throws FencingConfigurationException when {@code maxAdvance} is below 1
         */
        public Builder maxAdvance(long maxAdvance) {
            try {
                this.maxAdvance = FenceRule.checkMaxAdvance("JdbcFenceStore", maxAdvance);
            } catch (IllegalArgumentException e) {
                throw new FencingConfigurationException(e.getMessage());
            }
            return this;
        }

        /**
         * Sends each check in the round trip of its transaction's {@code COMMIT} instead of one of its own before the
         * write (off by default; PostgreSQL only, which {@link #build()} checks: on MariaDB a statement that commits
         * implicitly would commit the body's writes before the check). The fenced method's body runs first and the
         * verdict comes at commit: effects outside the database (HTTP calls, messages, files) happen even for a stale
         * token, and only the database writes of the same transaction are fenced. A rejected check fails in the server
         * before the {@code COMMIT} sent with it runs, the transaction rolls back, so nothing of it persists, and the
         * caller's commit fails with the {@link TokenRejectedException}. Needs Spring-managed JDBC transactions (a
         * {@link DataSourceTransactionManager} or {@code JdbcTransactionManager}); JPA and Hibernate transactions are
         * refused. See docs/stores.md.
         */
        public Builder checkAtCommit(boolean checkAtCommit) {
            this.checkAtCommit = checkAtCommit;
            return this;
        }

        /**
         * Says that the table is compacted, by this application or another one on the same table (off by default;
         * a {@link JdbcFenceAdmin#compact} through this store turns it on too). On PostgreSQL and H2 a transaction
         * above READ COMMITTED whose snapshot predates a compaction batch would judge a folded resource against the
         * family floor as it was, so the store then refuses checks in Spring-managed transactions declared REPEATABLE
         * READ or SERIALIZABLE ({@code @Transactional(isolation = ...)}); a pool's or the database's own default
         * isolation is not seen. MariaDB reads the floor current at any level and is not affected.
         */
        public Builder compacted(boolean compacted) {
            this.compacted = compacted;
            return this;
        }

        /**
         * Checks the table name, detects (or checks) the dialect and builds the store. The table is checked later,
         * by {@link JdbcFenceStore#verify()}, so that the application's database initialization can create it first.
         *
         * @throws FencingConfigurationException saying what to do, when the table name is invalid, or the database
         *                                       is unreachable, unsupported or not the configured dialect, or
         *                                       {@link #checkAtCommit(boolean)} is set for a database other than
         *                                       PostgreSQL or a transaction manager it does not support
         */
        public JdbcFenceStore build() {
            resolve();
            if (checkAtCommit) {
                JdbcDialect dialect = configuredDialect();
                if (dialect.fenceSql() == FenceSql.MARIADB) {
                    throw new FencingConfigurationException("JdbcFenceStore checkAtCommit(true) is not supported on "
                            + "MariaDB: a statement in the method body that commits implicitly there (DDL such as "
                            + "CREATE TABLE, TRUNCATE, LOCK TABLES, START TRANSACTION) would commit the body's writes "
                            + "before the check sent with COMMIT could refuse them, so a stale token's writes could "
                            + "persist; and measured, the mode is slower than the default one on MariaDB. Remove "
                            + "checkAtCommit (fencing.store.jdbc.check-at-commit) to check before the method body");
                }
                if (!dialect.fenceSql().checksAtCommit()) {
                    throw new FencingConfigurationException("JdbcFenceStore checkAtCommit(true) is supported on "
                            + "PostgreSQL only, and the database is " + dialect.productName()
                            + " (dialect " + dialect + "); remove checkAtCommit (fencing.store.jdbc.check-at-commit) "
                            + "to check before the method body, which works on every database");
                }
                if (transactionManager != null && !(transactionManager instanceof DataSourceTransactionManager)) {
                    throw new FencingConfigurationException(
                            notJdbcTransactions("", "transaction manager", transactionManager));
                }
            }
            if (transactionManager != null) {
                String problem = ManagedDataSources.mismatch(transactionManager, dataSource());
                if (problem != null) {
                    throw new FencingConfigurationException("JdbcFenceStore on table '" + tableName() + "': "
                            + problem + ". Its checks would run on a connection of their own, outside that "
                            + "manager's transactions (in autocommit: max_seen advanced and the row lock released "
                            + "before the method's writes commit), so a stale token's writes could commit after a "
                            + "newer token's. Give the store the transaction manager of its own DataSource "
                            + "(JdbcFenceStore.builder(dataSource).transactionManager(managerOfThatDataSource)), or "
                            + "leave transactionManager out: the default joins the transactions on the store's "
                            + "DataSource. With the Spring Boot starter, its store takes the primary DataSource and "
                            + "the primary transaction manager: make them a matching pair, or define the "
                            + "JdbcFenceStore bean yourself");
                }
            }
            PlatformTransactionManager tm = transactionManager != null ? transactionManager
                    : new JoiningDataSourceTransactionManager(dataSource());
            return new JdbcFenceStore(this, tm);
        }
    }

    /**
     * The default transaction manager: a {@link DataSourceTransactionManager} that also joins a transaction another
     * manager runs on a connection of the data source. {@code JpaTransactionManager} (and
     * {@code HibernateTransactionManager}) bind their transaction's connection to the data source for JDBC code
     * without marking it as a {@code DataSourceTransactionManager} transaction; a plain one would take that bound
     * connection for a transaction of its own and commit it at the end of the check, committing the caller's work
     * (fence row included) before the caller decides.
     */
    private static final class JoiningDataSourceTransactionManager extends DataSourceTransactionManager {
        private static final long serialVersionUID = 1L;

        JoiningDataSourceTransactionManager(DataSource dataSource) {
            super(dataSource);
        }

        /**
         * Also a transaction of another manager that bound a connection of this DataSource for its transaction (JPA's,
         * say); not a connection {@code DataSourceUtils} bound for a statement made in another manager's transaction
         * (a {@code JdbcTemplate} in a Spring Batch step's resourceless one), which is in no transaction of this
         * DataSource (in autocommit, or in one nobody commits): joined, the check would commit at once, apart from
         * the write, or be lost with it. The store then runs the call in a transaction of its own, as a plain
         * {@code DataSourceTransactionManager} does. {@code DataSourceUtils} marks the holders it binds synchronized
         * with the transaction; a manager's own holder is not (this class's own is found by the superclass).
         */
        @Override
        protected boolean isExistingTransaction(Object transaction) {
            return super.isExistingTransaction(transaction)
                    || (TransactionSynchronizationManager.isActualTransactionActive()
                    && TransactionSynchronizationManager.getResource(obtainDataSource())
                            instanceof ConnectionHolder held
                    && !held.isSynchronizedWithTransaction());
        }
    }
}
