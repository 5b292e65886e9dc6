package dev.fencing.jdbc;

import dev.fencing.FencingConfigurationException;
import dev.fencing.guard.LogPace;
import dev.fencing.issuer.AbstractLease;
import dev.fencing.issuer.AbstractTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.recovery.IssuedResources;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.retention.CompactionResult;
import dev.fencing.retention.IssuerCompaction;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.retention.ResourceFamily;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * A {@link TokenIssuer} for applications that only have a database: a lease table with one row per resource
 * (resource, holder, token, expires_at). Acquiring succeeds when the lease is free or expired, and advances the
 * row's token in the same transaction, so tokens are durable, per resource, and strictly increasing across
 * restarts. Works on PostgreSQL, MariaDB and H2; times come from the database's clock.
 *
 * <p><b>The trade-off:</b> this is a lease on wall-clock time with no keep-alive. A holder that runs longer than
 * the lease (a pause, a slow call) loses it to the next acquirer without noticing, exactly the zombie case. What
 * keeps the data safe is the fence (max_seen checked at the resource), not the lease: pair it with a fence store.
 *
 * <p>Any resource a {@link FencingToken} accepts (up to {@link FencingToken#MAX_PART_LENGTH} chars) can be locked;
 * the holder is {@code jdbc-}, a random UUID drawn once per issuer, and a sequence number. A failure after the lease
 * was taken frees it again before the exception reaches the caller; an interrupt does not stop a release.
 *
 * <p><b>Waiting.</b> The acquirers of one issuer waiting for a resource queue in arrival order: only the first polls
 * the lease row (pausing 20 ms, then twice as long each time, up to 250 ms), and a release by this issuer wakes it
 * at once, so a lease freed here is taken next by the longest waiter here, not by a newcomer, and is not left idle
 * while waiters sleep. Acquirers of different issuers (other instances) are not queued with each other: the first
 * to try after a release elsewhere, or after a lease expired, takes it.
 *
 * <p>The lease table is checked by {@link #verify()} at the end of application context startup (after the
 * application's database initialization), or before the first acquire outside a Spring context.
 *
 * <p>As {@link IssuedTokens} (for recovery), the lease row answers exactly: its token column is the highest token
 * issued for the resource, its holder and expiry whether the lease is held.
 *
 * <p><b>Retention</b> ({@link IssuerFloors}, {@link #compact}): a resource with a family ({@code accounts:42} is of
 * {@code accounts}, see {@link ResourceFamily}) is issued {@code max(its row's token, its family's floor) + 1}, and a
 * resource without a row starts above its family's floor. {@link #compact} folds free rows idle for longer than an
 * age into that floor, so per-entity resources do not keep a row each for ever. The floors are rows of the lease
 * table itself, keyed by a control character and the family (no lockable resource can take such a key): no second
 * table, no schema change, and one row lock order for leases and floors.
 */
public final class JdbcTokenIssuer extends AbstractTokenIssuer<JdbcTokenIssuer.JdbcLease>
        implements IssuedTokens, IssuedResources, IssuerFloors, IssuerCompaction, SmartInitializingSingleton,
        BeanFactoryAware, ApplicationListener<ContextRefreshedEvent> {

    private static final System.Logger LOG = System.getLogger(JdbcTokenIssuer.class.getName());

    /** This issuer's lines of leases taken past the acquire timeout: at most one a minute. */
    private final LogPace lateLines = new LogPace(1, 60_000, null);


    /** The default lease table. */
    public static final String DEFAULT_TABLE = "fencing_lease";


    /** The resource {@link #probe()} reads: never locked. */
    static final String PROBE_RESOURCE = "fencing.health.probe";

    private final JdbcTemplate jdbc;

    private final TransactionTemplate transactions;
    private final LeaseDialect dialect;
    private final String table;
    private final Duration leaseTime;
    private final String name;
    private final String ensureRowSql;
    private final String lockRowSql;
    private final String takeSql;
    private final String releaseSql;
    private final String stateSql;
    private final boolean verifyAtStartup;
    private final TableVerifier verifier;
    private final LeaseFloors floors;
    private final LeaseCompaction compaction;
    private BeanFactory beanFactory;
    /** Whether the context's startup ran {@link #requireGuard()}: once, with the singletons or at the refresh. */
    private volatile boolean guardChecked;

    /**
     * Test seams, package-private: {@code afterGrant} runs with the resource right after the lease was taken and
     * before it is returned, so a test can inject a failure there; {@code nanoClock} measures lease time, so a test
     * can let a lease expire; the pauses of a waiter, so a test can tell a wake-up from a poll. None changes anything
     * unless a test in this package sets it.
     */
    volatile Consumer<String> afterGrant = resource -> { };
    volatile LongSupplier nanoClock = System::nanoTime;
    /** The first waiter's first pause between tries, doubled after each try up to {@link #maxPauseMillis}. */
    volatile long firstPauseMillis = 20;
    /** The longest pause between two tries of the first waiter, and the longest park of the others. */
    volatile long maxPauseMillis = 250;

    /** This issuer's waiters per resource: only the first polls, and this issuer's releases wake it. */
    private final LeaseQueue queue = new LeaseQueue();
    /** Holder ids: drawn once per issuer (a random UUID), then a sequence: unique without a random draw per acquire. */
    private final String holderPrefix = "jdbc-" + UUID.randomUUID() + "-";
    private final AtomicLong holders = new AtomicLong();

    private JdbcTokenIssuer(Builder b) {
        super(b.registry, "jdbc");
        // The lease transactions are the issuer's own, on connections of their own. Spring binds a transaction's
        // connection by DataSource object, and a JpaTransactionManager (or HibernateTransactionManager) transaction
        // binds its connection to the application's DataSource without marking it as a DataSourceTransactionManager
        // transaction: REQUIRES_NEW on that DataSource would not suspend it but run on, and commit, the caller's
        // connection. A DataSource of the issuer's own (same pool) is a key no caller's transaction uses.
        DataSource own = new DelegatingDataSource(b.dataSource());
        DataSourceTransactionManager transactionManager = new DataSourceTransactionManager(own);
        this.jdbc = new JdbcTemplate(own);
        this.transactions = new TransactionTemplate(transactionManager);
        this.transactions.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        this.dialect = LeaseDialect.of(b.configuredDialect());
        this.table = b.tableName();
        this.leaseTime = b.leaseTime;
        this.name = b.name != null ? b.name : "the database behind " + b.dataSource();
        this.ensureRowSql = dialect.ensureRowSql(table);
        this.lockRowSql = dialect.lockRowSql(table);
        this.takeSql = dialect.takeSql(table);
        this.releaseSql = dialect.releaseSql(table);
        this.stateSql = dialect.stateSql(table);
        this.verifyAtStartup = b.verify;
        this.floors = new LeaseFloors(jdbc, dialect, table);
        this.compaction = new LeaseCompaction(jdbc, transactions, dialect, table, floors);
        // the probe inserts and locks rows with the issuer's own statements, in a transaction it rolls back; it
        // inserts first: a locking read of a missing row takes a gap lock on InnoDB (REPEATABLE READ), and instances
        // probing a new table at once would then deadlock on each other's gaps when they insert
        this.verifier = b.verifier(jdbc, transactionManager, new TableVerifier.Probe() {
            @Override
            public void write(String resource) {
                jdbc.update(ensureRowSql, resource);
                lockRow(resource);
            }

            @Override
            public boolean sharesRow(String resource) {
                return lockRow(resource) != null;
            }
        }, () -> "; leases of " + leaseTime.toMillis() + " ms");
    }

    /** Starts a builder for an issuer on {@code dataSource}. */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    @Override
    protected JdbcLease doAcquire(String resource, Duration timeout, Grant grant) throws InterruptedException {
        ensureVerified(resource);
        long deadline = System.nanoTime() + timeout.toNanos();
        String holder = holderPrefix + holders.incrementAndGet();
        long pause = firstPauseMillis;
        RuntimeException lastError = null;
        long leaseClock = 0;            // when the lease may have started: the first attempt that may have taken it
        boolean uncertain = false;      // a commit failed: it may have been applied and only its reply lost
        // a newcomer queues behind this issuer's waiters for the resource instead of overtaking them; one that does
        // not wait (a zero timeout) still tries once, as a fair lock's tryLock() does
        boolean queued = !timeout.isZero() && queue.waiting(resource);
        boolean first = !queued || queue.join(resource);
        try {
            while (true) {
                if (first) {
                    long attemptStarted = nanoClock.getAsLong();
                    if (!uncertain) {
                        leaseClock = attemptStarted;
                    }
                    Long token;
                    try {
                        token = tryTake(resource, holder);
                        lastError = null;
                    } catch (org.springframework.jdbc.BadSqlGrammarException e) {
                        // the table gone or changed (or no privilege on it): no retry can help, and the wait would
                        // only delay a failure every acquisition shares
                        throw new LockAcquisitionException(resource, "Could not lock resource '" + resource + "': "
                                + "the lease table '" + table + "' is missing or unusable now ("
                                + e.getMostSpecificCause().getMessage()
                                + "); every acquisition fails until it is back. A table recreated "
                                + "empty (the shipped lease-*.sql script) counts from 1 again, below the fence's "
                                + "max_seen: raise its counters with the floor raise after a restore (POST "
                                + "/actuator/fencing {\"afterRestore\": true, \"atLeast\": N}), or restore it from a "
                                + "backup (docs/operations.md)", e, false);
                    } catch (DataAccessException | TransactionException e) {
                        lastError = e; // unreachable or failing database: keep trying until the deadline
                        // only a failed commit leaves it open whether the lease was taken; no connection, a failed
                        // statement or a rollback took nothing
                        if (e instanceof TransactionSystemException && !uncertain) {
                            uncertain = true;
                            grant.granted(() -> free(resource, holder)); // a failed attempt may have taken it after all
                        }
                        token = null;
                    }
                    if (token != null) {
                        // the lease is ours: any failure from here frees it
                        grant.granted(() -> free(resource, holder));
                        afterGrant.accept(resource);
                        tookLate(resource, timeout, deadline - System.nanoTime());
                        return new JdbcLease(new FencingToken(resource, token, holder),
                                leaseClock + leaseTime.toNanos());
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    String waited = waited(timeout, left);
                    throw lastError != null
                            ? new LockAcquisitionException(resource, "Could not lock resource '" + resource + "' in "
                                    + name + " within " + timeout.toMillis() + " ms" + waited + ": "
                                    + lastError.getMessage(), lastError)
                            : new LockAcquisitionException(resource, "Timed out after " + timeout.toMillis()
                                    + " ms waiting for the database lease on resource '" + resource + "' (" + name
                                    + ")" + waited);
                }
                if (!queued) {
                    queued = true;
                    first = queue.join(resource);
                }
                // the first polls, pausing longer each time (a holder elsewhere frees the lease unannounced), and is
                // woken at once when this issuer frees the lease; the next is woken when the first leaves the line
                long park = TimeUnit.MILLISECONDS.toNanos(first ? pause : maxPauseMillis);
                LockSupport.parkNanos(this, Math.min(park, left));
                if (Thread.interrupted()) {
                    throw new InterruptedException("interrupted while waiting for the database lease on '"
                            + resource + "'");
                }
                boolean wasFirst = first;
                first = queue.first(resource);
                pause = wasFirst ? Math.min(pause * 2, maxPauseMillis) : firstPauseMillis;
            }
        } finally {
            if (queued) {
                queue.leave(resource);
            }
        }
    }

    /** How many of this issuer's acquirers wait for {@code resource}'s lease; for tests. */
    int waiting(String resource) {
        return queue.waiters(resource);
    }

    /** Whether {@code resource} has a line of waiters; for tests (none once nobody waits). */
    boolean hasLine(String resource) {
        return queue.waiting(resource);
    }

    @Override
    protected LockAcquisitionException failure(String resource, Duration timeout, Exception cause) {
        return new LockAcquisitionException(resource, "Could not lock resource '" + resource + "' in " + name + ": "
                + cause, cause);
    }

    /** Frees a lease this acquire took but does not hand out. */
    private void free(String resource, String holder) {
        try {
            jdbc.update(releaseSql, resource, holder);
        } finally {
            queue.freed(resource);
        }
    }

    /** What {@link #takeLocked} returns when the resource has no row yet. */
    private static final Object NO_ROW = new Object();

    /**
     * How long the acquisition really took, when it overran {@code timeout} by more than a second: an attempt that
     * starts before the deadline waits for a connection as long as the pool lets it (Hikari's connection-timeout, 30 s
     * by default), which the deadline cannot cut short, so a wait can reach the timeout plus the pool's. Empty
     * otherwise.
     */
    static String waited(Duration timeout, long leftNanos) {
        long overranMillis = -leftNanos / 1_000_000;
        return overranMillis <= 1_000 ? "" : " (after " + (timeout.toMillis() + overranMillis) + " ms, "
                + overranMillis + " ms past the acquire timeout: an attempt that starts before it waits for a pooled "
                + "connection as long as the pool's connection timeout allows, so a wait can reach the acquire "
                + "timeout plus the pool's; lower spring.datasource.hikari.connection-timeout to shorten the overrun)";
    }

    /**
     * One attempt: the token if the lease was free or expired, else {@code null}. The row is locked first, in a
     * transaction of the attempt's own, so the common path takes no shared lock (on InnoDB an insert-if-absent on an
     * existing row takes one, and two of them deadlock on the upgrade). A resource without a row gets one in a
     * transaction of its own, holding no lock while it inserts, before the attempt locks it again: in REPEATABLE
     * READ a locking read of a missing row locks the gap where it would go, and two first acquisitions that each
     * held such a gap and then inserted into it deadlocked (the database rolled one back, the attempt was repeated,
     * and MariaDB's driver logged each at WARN). On PostgreSQL, which locks no gaps, the attempt that finds no row
     * inserts it and takes the lease in its own transaction: one commit for a new resource, not three. Three times
     * without a row (a compaction deleting it each time in between): {@code null}, and the next attempt starts over.
     */
    /**
     * Says, at WARNING and at most once a minute, that a lease was taken more than a second past the acquire timeout
     * (an attempt that began before it waited that long for a pooled connection): the call then starts later than
     * its caller was told it could wait, which nothing else would show.
     */
    private void tookLate(String resource, Duration timeout, long leftNanos) {
        String waited = waited(timeout, leftNanos);
        if (waited.isEmpty()) {
            return;
        }
        long skipped = lateLines.due("late", System.currentTimeMillis());
        if (skipped >= 0) {
            LOG.log(System.Logger.Level.WARNING, () -> "Locked resource '" + resource + "' in " + name + waited
                    + (skipped > 0 ? " (" + skipped + " more such late leases since the last line; at most one line a "
                    + "minute)" : ""));
        }
    }

    private Long tryTake(String resource, String holder) {
        for (int tries = 0; tries < 3; tries++) {
            Object taken = transactions.execute(status -> takeLocked(resource, holder));
            if (taken != NO_ROW) {
                return (Long) taken;
            }
            try {
                transactions.executeWithoutResult(status -> jdbc.update(ensureRowSql, resource));
            } catch (DuplicateKeyException raced) {
                // another transaction inserted the row first (H2's MERGE): it exists now, which is all we need
            }
        }
        return null;
    }

    /**
     * In the attempt's transaction: locks the resource's row and takes the lease when it is free or expired (the
     * token), or {@code null} when it is held, or {@link #NO_ROW}. A row this very acquire already holds (an earlier
     * attempt committed, but its reply was lost) is returned as taken, not waited on until it expires. The family
     * floor is read only once the row is locked: a compaction that folded the row (and raised the floor) committed
     * before this transaction could lock it, so the floor read here covers every token the folded row issued.
     */
    private Object takeLocked(String resource, String holder) {
        Object[] row = lockRow(resource);
        if (row == null && dialect.insertsInAttempt()) {
            // PostgreSQL: the new row, inserted here, stays locked by this transaction until it commits, so a new
            // resource's lease is taken in this one transaction instead of three (see LeaseDialect)
            jdbc.update(ensureRowSql, resource);
            row = lockRow(resource);
        }
        if (row == null) {
            return NO_ROW;
        }
        if (((Integer) row[1]) == 0) {
            return holder.equals(row[2]) ? row[0] : null;
        }
        long own = (Long) row[0];
        long last = Math.max(own, lockedFloor(resource));
        if (last == Long.MAX_VALUE) {
            // a value no issuer hands out: a token forged or made by hand, written as max_seen and raised into the
            // counters by a floor raise or, for a family, folded by compaction into the floor of every member
            throw new LockAcquisitionException(resource, "Token counter of resource '" + resource + "' in "
                    + name + " is exhausted (" + last + ")" + (own == Long.MAX_VALUE ? ""
                    : ": the floor of its family is there, so every resource of the family is; compaction folds a "
                    + "member's max_seen into that floor, and no issuer hands out such a value, so a token forged or "
                    + "made by hand reached the fence; see \"A family floor no issuer reached\" in docs/operations.md"),
                    null, false); // no retry helps
        }
        jdbc.update(takeSql, holder, last + 1, dialect.ttlParameter(leaseTime.toMillis()), resource);
        return last + 1;
    }

    /** The floor of the resource's family, read under a lock in the current transaction; 0 without a family. */
    private long lockedFloor(String resource) {
        String family = ResourceFamily.of(resource);
        return family == null ? 0 : floors.read(family);
    }

    private Object[] lockRow(String resource) {
        return jdbc.query(lockRowSql,
                rs -> rs.next() ? new Object[] {rs.getLong(1), rs.getInt(2), rs.getString(3)} : null, resource);
    }

    /**
     * Frees the row only if this acquisition still holds it: a lease that expired and was taken is left alone, and
     * counted as lost. Runs in a transaction of its own, never the caller's: a caller's transaction that rolls back
     * (or, on PostgreSQL, was aborted by a failed statement) must not take the release with it.
     */
    @Override
    protected boolean doRelease(JdbcLease lease) {
        try {
            return releaseRow(lease);
        } finally {
            queue.freed(lease.token().resource()); // the first waiter here tries at once rather than after its pause
        }
    }

    private boolean releaseRow(JdbcLease lease) {
        for (int attempt = 1; ; attempt++) {
            try {
                Integer freed = transactions.execute(status -> jdbc.update(releaseSql,
                        lease.token().resource(), lease.token().holder()));
                return freed != null && freed != 0;
            } catch (TransientDataAccessException e) { // a deadlock victim or lock timeout: safe to repeat
                if (attempt == 5) {
                    throw e;
                }
            }
        }
    }

    /** Names the lease table and the floor raise that repairs it (docs/operations.md). */
    @Override
    protected LockAcquisitionException wentBack(String resource, long token, long issuedBefore) {
        return new LockAcquisitionException(resource, "The token counter of resource '" + resource + "' in the lease "
                + "table '" + table + "' (" + name + ") went back: it is at " + token + ", yet this issuer handed out "
                + issuedBefore + " for it before (the table restored from an older backup, truncated or recreated, its "
                + "row deleted). A holder of a token up to " + issuedBefore + " may still write, so none up to it is "
                + "handed out (fail closed); the lease was given back. Raise the counters above it: the floor raise "
                + "after a restore with atLeast " + issuedBefore + " or more (docs/operations.md, \"Backup and "
                + "restore of the fence table\")", null, false);
    }

    /**
     * The token column of the resource's lease row, committed now; for a resource without a row (never locked, or
     * folded by {@link #compact}), or whose row an acquisition has inserted but not yet taken (in a transaction of its
     * own, {@link #tryTake}: it holds 0, while a token up to the floor may have been issued for the resource before it
     * was folded), its family's floor, 0 when it has none. A row that issued a token holds the highest one issued for
     * the resource: it was taken above the floor of its time, and a row folded since is gone.
     */
    @Override
    public long highestIssued(String resource) {
        // never below what this issuer handed out itself: a table that went back (restored, truncated) must not
        // lead a reset to lower max_seen below tokens whose holders may still write
        long here = issuedHere(resource);
        long[] state = state(resource);
        if (state != null && state[0] > 0) {
            return Math.max(state[0], here);
        }
        String family = ResourceFamily.of(resource);
        return Math.max(here, family == null ? 0 : familyFloor(family).orElse(0));
    }

    /**
     * The highest token in the lease table {@code table} on {@code dataSource} (its rows and family floors), read now
     * without building an issuer: an upper bound of every token a {@code JdbcTokenIssuer} on that table handed out,
     * presented to a fence store or not, which the base of a move to another issuer must be above. Empty when the
     * table does not exist (the database says so) or holds no row.
     *
     * @throws FencingConfigurationException when the name is invalid, or the table cannot be read (the database
     *                                       unreachable, no token column)
     */
    public static OptionalLong highestInTable(DataSource dataSource, String table) {
        JdbcTable.LEASE.requireName(table);
        JdbcTemplate jdbc = new JdbcTemplate(Objects.requireNonNull(dataSource, "dataSource"));
        try {
            if (MissingTable.listedAsAbsentOnMariaDb(jdbc, table)) {
                return OptionalLong.empty();
            }
            Long highest = jdbc.queryForObject("SELECT MAX(token) FROM " + table, Long.class);
            return highest == null ? OptionalLong.empty() : OptionalLong.of(highest);
        } catch (DataAccessException e) {
            if (MissingTable.causes(e)) {
                return OptionalLong.empty();
            }
            throw new FencingConfigurationException("Lease table '" + table + "' could not be read for its highest "
                    + "token: " + TableVerifier.oneLine(String.valueOf(e.getMostSpecificCause())), e);
        }
    }

    /** {@inheritDoc} The lease table's rows, without the family floor rows. */
    @Override
    public List<String> issuedResources(String after, int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("JdbcTokenIssuer.issuedResources on table '" + table
                    + "': limit must be at least 1, was " + limit);
        }
        verify();
        String sql = "SELECT resource FROM " + table + " WHERE SUBSTR(resource, 1, 1) <> ?"
                + (after == null ? "" : " AND resource > ?") + " ORDER BY resource LIMIT " + limit;
        return after == null ? jdbc.queryForList(sql, String.class, LeaseFloors.KEY_PREFIX)
                : jdbc.queryForList(sql, String.class, LeaseFloors.KEY_PREFIX, after);
    }

    /** The committed floor of {@code family}, empty when none was ever raised. */
    public OptionalLong familyFloor(String family) {
        checkFamily("familyFloor", family, 0);
        verify();
        List<Long> floor = jdbc.queryForList("SELECT token FROM " + table + " WHERE resource = ?", Long.class,
                LeaseFloors.key(family));
        return floor.isEmpty() ? OptionalLong.empty() : OptionalLong.of(floor.get(0));
    }

    /**
     * Makes every token issued from now on for a resource of {@code family} larger than {@code floor}: raises the
     * family's floor row (creating it), durably, in a transaction of its own. Idempotent; never lowers the floor.
     *
     * @throws IllegalArgumentException naming the family and floor when the family is blank, longer than 255
     *                                  chars or has a control character, or the floor is negative; nothing changed
     */
    @Override
    public void raiseFamilyFloor(String family, long floor) {
        checkFamily("raiseFamilyFloor", family, floor);
        verify();
        raiseWithRetries(() -> floors.raise(family, floor));
    }

    /**
     * Raises {@code resource}'s counter (its row's token, the row created free when missing) to at least
     * {@code floor}, durably, in a transaction of its own, so the next token issued for it is above the floor; never
     * lowers it. A lease held now keeps its token and its holder: only the tokens issued after it change. For the
     * step after a restore of the lease table ({@code FloorRaise} with a value).
     *
     * @throws IllegalArgumentException naming the resource and floor when the resource cannot be locked or the floor
     *                                  is negative; nothing changed
     */
    @Override
    public void raiseResourceFloor(String resource, long floor) {
        TokenIssuer.checkAcquire(resource, Duration.ZERO);
        if (floor < 0) {
            throw new IllegalArgumentException("JdbcTokenIssuer.raiseResourceFloor on table '" + table + "': floor of "
                    + "resource '" + resource + "' must not be negative, was " + floor);
        }
        verify();
        raiseWithRetries(() -> floors.raiseRow(resource, floor));
    }

    /** Runs {@code raise} in a transaction of its own, again (at most 5 times) when the database aborted it. */
    private void raiseWithRetries(Runnable raise) {
        for (int attempt = 1; ; attempt++) {
            try {
                transactions.executeWithoutResult(status -> raise.run());
                return;
            } catch (TransientDataAccessException e) { // a deadlock victim or lock timeout: safe to repeat
                if (attempt == 5) {
                    throw e;
                }
            }
        }
    }

    /**
     * Folds every lease row that is free (released, or expired) and whose lease ended longer than {@code idleFor}
     * ago into its family's floor, {@code batchSize} rows per transaction, and deletes it; rows of resources without
     * a family are kept. Safe while acquires run: a row is folded only after it was locked and found still free and
     * idle, in the same transaction that raised its family's floor to at least its token, and an acquire of a
     * resource without a row issues above that floor, so no resource is ever issued a token at or below one it was
     * issued before. A row released by an earlier version of this library (no end time) counts as idle.
     *
     * @throws IllegalArgumentException when {@code idleFor} is null or negative, or {@code batchSize} below 1;
     *                                  nothing changed
     */
    @Override
    public CompactionResult compact(Duration idleFor, int batchSize) {
        if (idleFor == null || idleFor.isNegative()) {
            throw new IllegalArgumentException("JdbcTokenIssuer.compact on table '" + table + "': idleFor must not "
                    + "be negative, was " + idleFor);
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("JdbcTokenIssuer.compact on table '" + table + "': batchSize must be "
                    + "at least 1, was " + batchSize);
        }
        verify();
        return compaction.compact(idleFor, batchSize);
    }

    private void checkFamily(String method, String family, long floor) {
        IssuerFloors.checkArguments("JdbcTokenIssuer." + method + " on table '" + table + "'", family, floor);
        if (family.length() > LeaseFloors.MAX_FAMILY_LENGTH) {
            throw new IllegalArgumentException("JdbcTokenIssuer." + method + " on table '" + table + "': family '"
                    + family.substring(0, 64) + "...' is " + family.length() + " chars long, longer than the "
                    + LeaseFloors.MAX_FAMILY_LENGTH + " a resource's family can be");
        }
        if (family.chars().anyMatch(Character::isISOControl)) {
            throw new IllegalArgumentException("JdbcTokenIssuer." + method + " on table '" + table + "': family '"
                    + family + "' contains a control character; no resource has such a family");
        }
    }

    /** Whether the resource's lease row has a holder and has not expired, by the database's clock. */
    @Override
    public boolean isHeld(String resource) {
        long[] state = state(resource);
        return state != null && state[1] == 1;
    }

    private long[] state(String resource) {
        verify();
        return jdbc.query(stateSql, rs -> rs.next() ? new long[] {rs.getLong(1), rs.getInt(2)} : null, resource);
    }

    /** The lease table name, as configured. */
    public String table() {
        return table;
    }

    /** How long a lease lasts before the lock may go to the next acquirer (there is no keep-alive). */
    public Duration leaseTime() {
        return leaseTime;
    }

    /**
     * Checks the lease table once: creates it first when configured to, checks the column types and widths, inserts
     * and locks probe rows inside a transaction it rolls back (the table exists, and resources differing only in
     * case, accents or trailing spaces stay distinct), and reads the unique key on {@code resource}: the checks of
     * {@link JdbcFenceStore#verify()}, by the same {@link TableVerifier}. Runs at the end of application context
     * startup when the issuer is a Spring singleton built with {@code verifyOnBuild(true)} (the default), else before
     * the first acquire. Idempotent; a failed verification is repeated on the next call.
     *
     * @throws FencingConfigurationException naming the table, the column and the fix
     */
    public void verify() {
        verifier.verify();
    }

    /**
     * {@link #verify()} (once), then a live read of the lease table, whatever the verification remembered: fails when
     * the table is gone or the database does not answer.
     *
     * @throws IllegalStateException naming the table and the database (the issuer's name), with the cause
     */
    @Override
    public void probe() {
        try {
            verify();
            jdbc.queryForList("SELECT token FROM " + table + " WHERE resource = ?", Long.class, PROBE_RESOURCE);
        } catch (RuntimeException e) {
            throw new IllegalStateException("Lease table '" + table + "' on " + name + " does not answer: "
                    + e.getMessage(), e);
        }
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    /**
     * The check of {@link #afterSingletonsInstantiated()} for an issuer bean that was not created with the singletons
     * (a lazy one, which the context creates to hand it this event).
     */
    @Override
    public void onApplicationEvent(ContextRefreshedEvent event) {
        if (!guardChecked && event.getApplicationContext().getAutowireCapableBeanFactory() == beanFactory) {
            requireGuard();
        }
    }

    /**
     * Once every singleton exists: verifies the lease table (after database initialization), unless disabled, and
     * fails the context's startup when it has beans with {@code @Fenced} methods but {@code @EnableFencing} is
     * missing (nothing would take this issuer's locks or check a token): before any lifecycle bean (a listener
     * container, the web server) starts, so none of those writes runs unchecked first.
     */
    @Override
    public void afterSingletonsInstantiated() {
        if (verifyAtStartup) {
            verify();
        }
        requireGuard();
    }

    private void requireGuard() {
        guardChecked = true;
        if (beanFactory != null && !UnguardedStoreCheck.fencingEnabled(beanFactory)) {
            UnguardedStoreCheck.requireGuard(beanFactory, "JdbcTokenIssuer on table '" + table + "'");
        }
    }

    private void ensureVerified(String resource) {
        if (!verifier.isVerified()) {
            try {
                verify();
            } catch (FencingConfigurationException e) {
                throw new LockAcquisitionException(resource, "Cannot lock resource '" + resource + "' in " + name
                        + ": the lease table failed its check: " + e.getMessage(), e);
            }
        }
    }

    /** A lease of this issuer: its row, held until the lease time ends. */
    final class JdbcLease extends AbstractLease {
        final long expiresAtNanos;

        JdbcLease(FencingToken token, long expiresAtNanos) {
            super(JdbcTokenIssuer.this, token);
            this.expiresAtNanos = expiresAtNanos;
        }

        /**
         * Found lost by its release, or not released and past its lease time as measured from before the acquiring
         * statement was sent (the row may be taken over from then on).
         */
        @Override
        public boolean isLost() {
            return super.isLost() || (!isReleased() && nanoClock.getAsLong() - expiresAtNanos >= 0);
        }
    }

    /**
     * Configures a {@link JdbcTokenIssuer}. Defaults: table {@value #DEFAULT_TABLE}, leases of 30 seconds, dialect
     * detected, table checked at the end of context startup (or before the first acquire).
     */
    public static final class Builder extends AbstractTableBuilder<Builder> {
        private Duration leaseTime = Duration.ofSeconds(30);
        private boolean verify = true;
        private String name;
        private MeterRegistry registry;

        private Builder(DataSource dataSource) {
            super(JdbcTable.LEASE, dataSource);
        }

        /** How long a lease lasts; there is no keep-alive, choose it longer than the critical section. */
        public Builder leaseTime(Duration leaseTime) {
            this.leaseTime = Objects.requireNonNull(leaseTime, "leaseTime");
            return this;
        }

        /**
         * Whether {@link #build()} connects to detect the dialect and the table is checked at the end of application
         * context startup (default). Turn off only to start while the database may be down; then the dialect must be
         * set, and the first acquire checks the table and reports what is wrong.
         */
        public Builder verifyOnBuild(boolean verify) {
            this.verify = verify;
            return this;
        }

        /** How messages name the database (default: the data source's {@code toString()}). */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        public Builder meterRegistry(MeterRegistry registry) {
            this.registry = registry;
            return this;
        }

        /**
         * Checks the table name and lease time, detects (or checks) the dialect and builds the issuer. The table is
         * checked later, by {@link JdbcTokenIssuer#verify()}, so that database initialization can create it first.
         *
         * @throws FencingConfigurationException when the table name or lease time is invalid, or the database is
         *                                       unreachable, unsupported or not the configured dialect
         */
        public JdbcTokenIssuer build() {
            checkName();
            if (leaseTime.toMillis() < 1) {
                throw new FencingConfigurationException("JdbcTokenIssuer leaseTime must be at least 1 ms, was "
                        + leaseTime);
            }
            if (verify) {
                resolve();
            } else if (configuredDialect() == null) {
                throw new FencingConfigurationException("JdbcTokenIssuer.verifyOnBuild(false) "
                        + "needs an explicit dialect");
            }
            return new JdbcTokenIssuer(this);
        }
    }
}
