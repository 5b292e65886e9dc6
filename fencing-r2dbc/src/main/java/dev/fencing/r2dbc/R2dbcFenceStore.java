package dev.fencing.r2dbc;

import dev.fencing.FencingConfigurationException;
import dev.fencing.context.MissingTokenException;
import dev.fencing.reactive.ReactiveFenceStore;
import dev.fencing.retention.ResourceFamily;
import dev.fencing.rule.FenceRule;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.store.FenceStoreException;
import dev.fencing.store.OutsideTransactionException;
import dev.fencing.store.TransientFenceFailure.Reason;
import dev.fencing.store.sql.FenceSql;
import dev.fencing.store.sql.FloorRows;
import dev.fencing.token.FencingToken;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.R2dbcException;
import io.r2dbc.spi.Result;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.r2dbc.connection.ConnectionHolder;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.NoTransactionException;
import org.springframework.transaction.reactive.TransactionContextManager;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.Comparator;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A {@link ReactiveFenceStore} in a relational database over R2DBC: max_seen lives in a table (one row per effective
 * resource) and is checked and advanced by one statement, the same as {@code JdbcFenceStore}'s, on the connection
 * of the caller's reactive transaction (Spring's {@code R2dbcTransactionManager}, through a
 * {@code TransactionalOperator} or {@code @Transactional} on a reactive method), so the check and the guarded write
 * commit or roll back together. The row lock the statement takes serializes fenced writes to the resource until
 * commit; a check waits for it at most {@link Builder#lockTimeout} and then fails as
 * {@link R2dbcFenceTransientException} ({@code BUSY}). Without an active transaction on the store's connection
 * factory, or beside another manager's transaction in the same reactive transaction context (nested either way), the
 * store cannot tell that the check and the write are atomic, so it refuses (fails closed).
 *
 * <p>Built with {@link #builder(ConnectionFactory)}; the table is checked by {@link #verify()} at startup.
 */
public final class R2dbcFenceStore implements ReactiveFenceStore {

    /** The default table name, the schema scripts' ({@value}). */
    public static final String DEFAULT_TABLE = FenceSql.DEFAULT_TABLE;

    private static final Log log = LogFactory.getLog(R2dbcFenceStore.class);

    /** How long a check waits by default for a resource's fence row that another transaction holds. */
    public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofSeconds(5);

    /**
     * The longest lock wait bound a store takes: {@link Integer#MAX_VALUE} ms (about 24.8 days), the most PostgreSQL's
     * {@code lock_timeout} holds.
     */
    public static final Duration MAX_LOCK_TIMEOUT = Duration.ofMillis(Integer.MAX_VALUE);

    private final ConnectionFactory connectionFactory;
    private final DatabaseClient client;
    private final R2dbcDialect dialect;
    private final String table;
    private final Duration lockTimeout;
    private final String checkSql;
    /** The check of a resource without a family, which reads no floor ({@link FenceSql#familylessCheckSql}). */
    private final String familylessCheckSql;
    /** PostgreSQL: the query before the check that swaps in its lock wait bound; {@code null} elsewhere. */
    private final String swapSql;
    /** MariaDB: reads a resource's row as it is now (a locking read), for {@link #confirmAt}. */
    private final String rowSql;
    private final R2dbcTableVerifier verifier;
    /** MariaDB: has the floor row of each family checked created ({@link FloorRows}); {@code null} elsewhere. */
    private final FloorRows floorRows;
    /** MariaDB: a deadlock rolls back the whole transaction, checks included ({@link HeldChecks}). */
    private final boolean checksAgainBeforeCommit;

    private R2dbcFenceStore(Builder b, R2dbcDialect dialect) {
        this.connectionFactory = b.connectionFactory;
        this.client = DatabaseClient.create(connectionFactory);
        this.dialect = dialect;
        this.table = b.table;
        this.lockTimeout = b.lockTimeout;
        FenceSql sql = dialect.sql();
        String rounded = sql.lockTimeoutRounding("R2dbcFenceStore", table, lockTimeout);
        if (rounded != null) {
            System.getLogger(R2dbcFenceStore.class.getName()).log(System.Logger.Level.WARNING, rounded);
        }
        // PostgreSQL: the bound swapped in by a query of its own (a statement takes its table lock before anything
        // in it runs), then the check, whose RETURNING puts the caller's back: two round trips. MariaDB: one
        // statement bounded by SET STATEMENT
        boolean postgresql = sql == FenceSql.POSTGRESQL;
        this.swapSql = postgresql ? sql.swapInLockTimeoutSql(lockTimeout.toMillis() + "ms") : null;
        this.checkSql = dialect.nativeMarkers(postgresql ? sql.restoringCheckSql(table, FenceRule.UNBOUNDED)
                : sql.checkSql(table, lockTimeout, FenceRule.UNBOUNDED));
        this.familylessCheckSql = dialect.nativeMarkers(postgresql
                ? sql.restoringFamilylessCheckSql(table, FenceRule.UNBOUNDED)
                : sql.familylessCheckSql(table, lockTimeout, FenceRule.UNBOUNDED));
        this.checksAgainBeforeCommit = !postgresql;
        // a locking read: the row as it is now, not the transaction's snapshot
        this.rowSql = dialect.nativeMarkers(sql.boundedByItself("SELECT max_seen, holder FROM " + table
                + " WHERE resource = ? FOR UPDATE", lockTimeout));
        this.verifier = new R2dbcTableVerifier(connectionFactory, client, dialect, table,
                token -> check(token.resource(), token, true));
        String floorRowSql = sql.floorRowSql(table, lockTimeout);
        // outside any transaction (subscribed apart from the check's chain): a connection of its own, autocommit
        this.floorRows = floorRowSql == null ? null : new FloorRows(table, (floorKey, created, failed) ->
                client.sql(dialect.nativeMarkers(floorRowSql)).bind(0, floorKey).then()
                        // a pool that never hands out a connection must not leave the family pending for ever
                        .timeout(lockTimeout.plusSeconds(30))
                        .subscribe(null, failed, created));
    }

    /** Starts a builder for a store on {@code connectionFactory}. */
    public static Builder builder(ConnectionFactory connectionFactory) {
        return new Builder(connectionFactory);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Signals {@link OutsideTransactionException} without running the check when no reactive transaction of the
     * store's connection factory is active, when another manager's transaction is active in the caller's transaction
     * context beside the store's (nested inside it or around it), when the store's connection is there only in
     * auto-commit, or when the transaction is read-only; {@link R2dbcFenceTransientException} when the fence row
     * stayed locked past the lock wait bound or the database aborted the check (serialization failure, deadlock). In
     * both cases, and on any rejection, the caller's transaction should roll back (an error signal through a
     * {@code TransactionalOperator} does).
     */
    @Override
    public <T> Flux<T> fence(String resource, FencingToken token, Flux<T> write) {
        if (resource == null || write == null) { // refused at assembly, before any statement
            throw new NullPointerException("R2dbcFenceStore.fence on table '" + table + "': " + (resource == null
                    ? "the resource to fence is null" : "the write for resource '" + resource + "' is null")
                    + " (token " + token + "); nothing was checked");
        }
        if (token == null) { // FencingContext.present(..) answers null when nothing is bound: refused, not an NPE
            throw new MissingTokenException(resource, "a check of R2dbcFenceStore on table '" + table + "'");
        }
        if (!resource.equals(token.resource())) {
            throw new IllegalArgumentException("Token " + token + " was issued for resource '" + token.resource()
                    + "', not for '" + resource + "'");
        }
        return requireTransaction(resource, token)
                .then(Mono.defer(() -> !checksAgainBeforeCommit
                        ? RollbackSeal.around(this, () -> noSynchronization(resource, token),
                        () -> check(resource, token, false))
                        : HeldChecks.around(this, resource, token, () -> noSynchronization(resource, token),
                        () -> check(resource, token, false))))
                .flatMapMany(row -> {
                    Verdict verdict = verdict(resource, token, row);
                    if (!verdict.accepted()) {
                        return Flux.error(TokenRejectedException.of(resource, token, row.maxSeen(), verdict));
                    }
                    return !checksAgainBeforeCommit ? write : HeldChecks.hold(this, resource, token).thenMany(write);
                });
    }

    /**
     * A transaction without synchronization: on MariaDB its checks could not run again before its commit, on
     * PostgreSQL its rollback could not be sealed ({@link RollbackSeal}).
     */
    private FenceStoreException noSynchronization(String resource, FencingToken token) {
        return new FenceStoreException(resource, token, "Fence check for resource '" + resource + "' on table '"
                + table + "' refused: its reactive transaction has no transaction synchronization, and "
                + (checksAgainBeforeCommit ? "on MariaDB the store runs each transaction's checks again before its "
                + "commit, where a deadlock may have undone them" : "on PostgreSQL the store ends a fenced "
                + "transaction that rolls back itself, so that a statement of its body arriving after the rollback "
                + "cannot commit without the check") + ". The write did not run", null);
    }

    /**
     * MariaDB: turns auto-commit off on the transaction's connection until the transaction ends
     * ({@link #restoreAutoCommit(Connection)}), so that statements after a deadlock's rollback wait for the commit, and
     * the checks run again before it, instead of committing at once; the connection's own setting is kept in a session
     * variable.
     */
    Mono<Void> keepTransactionOpen() {
        return client.sql("SET @fencing_autocommit = @@autocommit, autocommit = 0").then();
    }

    /**
     * MariaDB: puts back the connection's auto-commit as {@link #keepTransactionOpen} found it, once the transaction
     * ended (committed or rolled back), before the connection goes back to its pool; a no-op when that statement never
     * ran. Spring's {@code R2dbcTransactionManager} would turn auto-commit on only if it saw it off, which it may not
     * yet when the transaction is cancelled while that statement is on its way.
     */
    static Mono<Void> restoreAutoCommit(Connection connection) {
        // first a ROLLBACK: the transaction has ended, so what is open on the connection now is a statement of it that
        // arrived after its rollback (a cancelled transaction's, which Spring and the driver let through), and setting
        // auto-commit back on would commit it, a write without its check
        return Flux.from(connection.createStatement("ROLLBACK").execute())
                .concatMap(Result::getRowsUpdated)
                .thenMany(Flux.from(connection.createStatement(
                        "SET autocommit = IFNULL(@fencing_autocommit, @@autocommit), @fencing_autocommit = NULL")
                        .execute()))
                .concatMap(Result::getRowsUpdated)
                .then();
    }

    /**
     * The connection of the store's transaction that {@code synchronizations} hold, or {@code null}: the one a
     * synchronization's completion callback runs its statements on (it may run outside the caller's context, when the
     * transaction is cancelled, where a statement of the {@link DatabaseClient} would ask the pool for another).
     */
    Connection transactionConnection(TransactionSynchronizationManager synchronizations) {
        return synchronizations.getResource(connectionFactory) instanceof ConnectionHolder holder
                ? holder.getConnection() : null;
    }

    /**
     * MariaDB: finds the resource's row, in the transaction, at one of {@code tokens} (its max_seen and holder), the
     * tokens the transaction checked for a resource it presented several tokens for ({@link HeldChecks}),
     * {@code when}; signals {@link R2dbcFenceTransientException} ({@code CONFLICT}) when it is not, so that the
     * transaction fails and rolls back: the database rolled back those checks (a deadlock the fenced body caught), or
     * a savepoint did.
     */
    Mono<Void> confirmAt(String resource, Set<FencingToken> tokens, String when) {
        FencingToken last = tokens.stream().max(Comparator.comparingLong(FencingToken::value)).orElseThrow();
        return client.sql(rowSql).bind(0, resource)
                .map((row, meta) -> new Row(Objects.requireNonNull(row.get(0, Long.class), "max_seen"),
                        row.get(1, String.class)))
                .one()
                .onErrorMap(e -> !(e instanceof FenceStoreException), e -> failed(resource, last, e))
                .map(Optional::of)
                .defaultIfEmpty(Optional.empty())
                .flatMap(found -> {
                    if (found.isPresent() && tokens.stream().anyMatch(token -> found.get().maxSeen() == token.value()
                            && token.holder().equals(found.get().holder()))) {
                        return Mono.<Void>empty();
                    }
                    return Mono.error(new R2dbcFenceTransientException(resource, last, Reason.CONFLICT, "Fence "
                            + "checks for resource '" + resource + "' (tokens " + tokens.stream()
                            .map(FencingToken::value).sorted().toList() + ") on table '" + table + "', looked at "
                            + "again " + when + ", were lost: " + found.map(row -> "the row is at " + row.maxSeen()
                            + " (holder '" + row.holder() + "')").orElse("the resource has no row") + ", not at a "
                            + "token the transaction checked. The database rolled back the transaction that made the "
                            + "checks (a deadlock, caught in the fenced body, which went on in a new transaction "
                            + "without the fence), or a savepoint undid them; the transaction's writes since are "
                            + "rolled back: let such errors leave the fenced publisher and retry the whole "
                            + "transaction",
                            null));
                });
    }

    /**
     * MariaDB: rolls the caller's transaction back on its connection, when a check run again before its commit was
     * refused ({@link HeldChecks#beforeCommit}), so that the commit that may still follow commits none of its writes.
     */
    Mono<Void> rollbackBeforeCommit() {
        return client.sql("ROLLBACK").then();
    }

    /** Whether {@code other} checks on the same rows: the same connection factory and table. */
    boolean sharesRowsWith(R2dbcFenceStore other) {
        return other == this || other.connectionFactory == connectionFactory && other.table.equals(table);
    }

    /**
     * MariaDB: runs a check the transaction passed ({@link HeldChecks}) again, in it, {@code when} (before its commit,
     * or before it checks another token for the resource); signals {@link R2dbcFenceTransientException}
     * ({@code CONFLICT}) when it is refused now, so that the transaction fails and rolls back.
     */
    Mono<Void> checkAgain(String resource, FencingToken token, String when) {
        return check(resource, token, false).flatMap(row -> {
            Verdict verdict = verdict(resource, token, row);
            if (verdict.accepted()) {
                return Mono.<Void>empty();
            }
            TokenRejectedException rejected = TokenRejectedException.of(resource, token, row.maxSeen(), verdict);
            return Mono.error(new R2dbcFenceTransientException(resource, token, Reason.CONFLICT, "Fence check for "
                    + "resource '" + resource + "' (token " + token + ") on table '" + table + "', run again " + when
                    + ", was refused: " + rejected.getMessage() + ". The database rolled back the transaction that "
                    + "made the first check (a deadlock, caught in the fenced body, which went on in a new transaction "
                    + "without the fence), so its writes since are rolled back; let such errors leave the fenced "
                    + "publisher and retry the whole transaction", rejected));
        });
    }

    /**
     * Completes when the caller's reactive transaction context holds a read-write transaction of this store's
     * connection factory and no other manager's transaction, else signals the refusal ({@link TransactionBinding});
     * nothing is checked then.
     */
    private Mono<Void> requireTransaction(String resource, FencingToken token) {
        return TransactionContextManager.currentContext()
                .onErrorResume(NoTransactionException.class, e -> Mono.empty())
                .map(context -> TransactionBinding.refusal(context, connectionFactory))
                .defaultIfEmpty(TransactionBinding.NONE)
                .flatMap(refusal -> refusal.isEmpty() ? Mono.<Void>empty()
                        : Mono.error(new OutsideTransactionException(resource, token, "R2dbcFenceStore refused the "
                                + "fence check of resource '" + resource + "' (token " + token + ") on table '" + table
                                + "': " + refusal + " The write did not run")));
    }

    private static Verdict verdict(String resource, FencingToken token, Row row) {
        if (row.maxSeen() < token.value()) {
            // the statement only leaves max_seen below the token when a bound refuses it, and this store has none
            throw new FenceStoreException(resource, token, "Fence check for resource '" + resource + "' (token "
                    + token + ") left max_seen at " + row.maxSeen() + ", below the token: the table did not behave "
                    + "as a fence; the write did not run", null);
        }
        // the row as the statement left it: the token's own when accepted, the newer or other holder's otherwise
        return FenceRule.judge(true, row.maxSeen(), row.holder(), token);
    }

    /** MariaDB: whether this store created or found the floor row of {@code family} (for tests). */
    boolean hasFloorRow(String family) {
        return floorRows != null && floorRows.exists(FenceSql.familyFloorKey(family));
    }

    /**
     * Runs the check statement (within its lock wait bound) on the transaction's connection; a {@code probe} (the
     * table verifier's, rolled back) leaves no floor row behind.
     */
    private Mono<Row> check(String resource, FencingToken token, boolean probe) {
        // FenceSql's parameters: resource, token, holder, the family floor key a resource without a row is judged
        // against (fence-state retention), and on PostgreSQL token and holder again; a resource without a family
        // has no floor, and its check reads none
        boolean family = ResourceFamily.has(resource);
        DatabaseClient.GenericExecuteSpec spec = client.sql(family ? checkSql : familylessCheckSql);
        Object[] parameters = family ? dialect.sql().checkParameters(resource, token.value(), token.holder())
                : FenceSql.familylessCheckParameters(resource, token.value(), token.holder());
        if (family && floorRows != null && !probe) {
            floorRows.ensure((String) parameters[3]);
        }
        for (int i = 0; i < parameters.length; i++) {
            spec = parameters[i] == null ? spec.bindNull(i, String.class) : spec.bind(i, parameters[i]);
        }
        Mono<Row> statement = spec
                .map((row, meta) -> new Row(Objects.requireNonNull(row.get(0, Long.class), "max_seen"),
                        row.get(1, String.class)))
                .one()
                .switchIfEmpty(Mono.error(() -> new FenceStoreException(resource, token, "Fence check for resource '"
                        + resource + "' returned no row from table '" + table + "'", null)));
        // PostgreSQL: after a failed statement the transaction or savepoint is rolled back, the bound with it
        Mono<Row> bounded = swapSql == null ? statement : client.sql(swapSql).then().then(statement);
        return bounded.onErrorMap(e -> !(e instanceof FenceStoreException), e -> failed(resource, token, e));
    }

    /** A failed statement as the store reports it: busy, conflict, or an error; carrying this very token. */
    private FenceStoreException failed(String resource, FencingToken token, Throwable e) {
        R2dbcException database = null;
        for (Throwable t = e; t != null && database == null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof R2dbcException r) {
                database = r;
            }
        }
        String state = database == null ? null : database.getSqlState();
        int code = database == null ? 0 : database.getErrorCode();
        String said = database == null ? e.getMessage() : database.getMessage();
        if ("55P03".equals(state) || code == 1205) {
            return new R2dbcFenceTransientException(resource, token, Reason.BUSY, "Fence check for resource '"
                    + resource + "' (token " + token + ") waited more than " + lockTimeout.toMillis() + " ms for the "
                    + "resource's fence row in table '" + table + "', held by another transaction (a writer still "
                    + "inside its fenced body, or a paused one); the write did not run, roll back and retry later: "
                    + said, e);
        }
        if ("57014".equals(state) || code == 1969) {
            return new R2dbcFenceTransientException(resource, token, Reason.BUSY, "Fence check for resource '"
                    + resource + "' (token " + token + ") was cancelled by the connection's statement timeout "
                    + "(PostgreSQL statement_timeout, MariaDB max_statement_time), shorter than the check's lock wait "
                    + "bound of " + lockTimeout.toMillis()
                    + " ms or the database's answer; the write did not run, roll back and retry later: " + said, e);
        }
        if ("40001".equals(state) || "40P01".equals(state) || code == 1213) {
            return new R2dbcFenceTransientException(resource, token, Reason.CONFLICT, "Fence check for resource '"
                    + resource + "' (token " + token + ") was aborted by the database as a serialization failure or "
                    + "deadlock; the write did not run, retry the transaction: " + said, e);
        }
        return new FenceStoreException(resource, token, "Fence check for resource '" + resource + "' in table '"
                + table + "' failed: " + said, e);
    }

    /**
     * Checks the table once, blocking (at startup, off any event loop): that it exists with the columns and types the
     * check needs, that {@code resource} is its key, and that the check statement runs on it (in a transaction
     * rolled back). Idempotent; a failed verification is repeated on the next call.
     *
     * @throws FencingConfigurationException naming the table, what is wrong and the script to create it with
     */
    @Override
    public void verify() {
        if (verifier.verify()) {
            log.info("R2dbcFenceStore: table '" + table + "' on " + dialect.productName() + " verified");
        }
    }

    /** Its table's listing: the resources with a max_seen, and the highest max_seen (blocking reads). */
    public R2dbcFenceInventory inventory() {
        return new R2dbcFenceInventory(client, dialect, table);
    }

    /** The dialect detected (or configured) at build time. */
    public R2dbcDialect dialect() {
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

    /** A fence row as the check statement left it. */
    record Row(long maxSeen, String holder) {
    }

    /**
     * Configures an {@link R2dbcFenceStore}. Defaults: table {@value #DEFAULT_TABLE}, dialect detected from the
     * connection factory's metadata, a lock wait bound of 5 seconds.
     */
    public static final class Builder {
        private final ConnectionFactory connectionFactory;
        private String table = DEFAULT_TABLE;
        private R2dbcDialect dialect;
        private Duration lockTimeout = DEFAULT_LOCK_TIMEOUT;

        private Builder(ConnectionFactory connectionFactory) {
            this.connectionFactory = Objects.requireNonNull(connectionFactory, "connectionFactory");
        }

        /**
         * The fence table (letters, digits, underscores, optionally {@code schema.table}); default
         * {@value #DEFAULT_TABLE}.
         */
        public Builder table(String table) {
            this.table = table;
            return this;
        }

        /** The database; detected from {@code ConnectionFactory.getMetadata().getName()} when not set. */
        public Builder dialect(R2dbcDialect dialect) {
            this.dialect = Objects.requireNonNull(dialect, "dialect");
            return this;
        }

        /**
         * How long a check waits for the fence row of a resource that another transaction holds before failing with
         * {@link R2dbcFenceTransientException} ({@code BUSY}); default 5 seconds, at least 1 ms and at most
         * {@link R2dbcFenceStore#MAX_LOCK_TIMEOUT}. PostgreSQL:
         * {@code lock_timeout} for the check statement only; MariaDB: {@code innodb_lock_wait_timeout} for the check
         * statement, in whole seconds rounded up.
         */
        public Builder lockTimeout(Duration lockTimeout) {
            Objects.requireNonNull(lockTimeout, "lockTimeout");
            if (lockTimeout.compareTo(MAX_LOCK_TIMEOUT) > 0) {
                throw new FencingConfigurationException("R2dbcFenceStore lockTimeout must be at most "
                        + MAX_LOCK_TIMEOUT.toMillis() + " ms (about 24.8 days: PostgreSQL's lock_timeout takes an int "
                        + "of milliseconds), was " + lockTimeout);
            }
            if (lockTimeout.toMillis() < 1) {
                throw new FencingConfigurationException("R2dbcFenceStore lockTimeout must be at least 1 ms, was "
                        + lockTimeout);
            }
            this.lockTimeout = lockTimeout;
            return this;
        }

        /**
         * Checks the table name and detects the dialect (without connecting), and builds the store. The table is
         * checked later, by {@link R2dbcFenceStore#verify()}.
         *
         * @throws FencingConfigurationException when the table name is invalid or the database is not supported
         */
        public R2dbcFenceStore build() {
            if (!FenceSql.isValidTableName(table)) {
                throw new FencingConfigurationException("R2dbcFenceStore table name '" + table + "' is invalid: use "
                        + "letters, digits and underscores, optionally schema-qualified (schema.table), at most 63 "
                        + "each");
            }
            R2dbcDialect resolved = dialect;
            if (resolved == null) {
                String name = connectionFactory.getMetadata().getName();
                resolved = R2dbcDialect.forProductName(name);
                if (resolved == null) {
                    throw new FencingConfigurationException("R2dbcFenceStore supports PostgreSQL and MariaDB; the "
                            + "connection factory reports '" + name + "'. Set .dialect(...) if it is one of them "
                            + "behind a wrapper");
                }
            }
            return new R2dbcFenceStore(this, resolved);
        }
    }
}
