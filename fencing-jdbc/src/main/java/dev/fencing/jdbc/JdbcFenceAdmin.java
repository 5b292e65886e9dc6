package dev.fencing.jdbc;

import dev.fencing.recovery.FenceAdmin;
import dev.fencing.recovery.FenceInventory;
import dev.fencing.recovery.ResetRefusedException;
import dev.fencing.retention.CompactionResult;
import dev.fencing.retention.FenceCompaction;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.store.sql.FenceSql;

import org.springframework.dao.CannotAcquireLockException;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Administrative tasks on the table of a {@link JdbcFenceStore}: reading a resource's committed max_seen, raising
 * it to a floor known from elsewhere, listing the resources and the highest max_seen ({@link FenceInventory}, for
 * the floor raise after a restore and the issuer offset's startup check), lowering it (the raw step of
 * {@link dev.fencing.recovery.MaxSeenReset}, which operators use), and compacting the table ({@link #compact}: idle
 * per-entity rows folded into family floors). Works on the store's table, data source and transaction manager, and
 * verifies
 * the table first as the store does; the store itself only checks tokens.
 *
 * <pre>{@code
 * JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
 * admin.raiseFloor("accounts:42", lastTokenOfTheOldLockService);
 * admin.compact(Duration.ofDays(30), 1000, IssuerFloors.ONE_SEQUENCE);   // ZooKeeper or etcd tokens
 * }</pre>
 */
public final class JdbcFenceAdmin implements FenceAdmin, FenceInventory, FenceCompaction {

    private final JdbcFenceStore store;
    private final String maxSeenSql;
    private final JdbcFenceCompactor compactor;

    /** Administers the table of {@code store}. */
    public JdbcFenceAdmin(JdbcFenceStore store) {
        this.store = Objects.requireNonNull(store, "store");
        this.maxSeenSql = store.dialect().maxSeenSql(store.table());
        this.compactor = new JdbcFenceCompactor(store);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Idle means not advanced (column {@code updated_at}, stamped by the database's clock) for longer than
     * {@code idleFor}, measured from the start of this call by the database's clock. A family floor is a row of the
     * same table, keyed {@code family + U+001F} (no resource has a control character). Each batch runs in a
     * transaction of its own on a connection of the store's data source, never the caller's, and first locks the table
     * against checks: on PostgreSQL {@code LOCK TABLE ... IN SHARE ROW EXCLUSIVE MODE}, on MariaDB
     * {@code LOCK TABLES ... WRITE} (the user needs the {@code LOCK TABLES} privilege), each waiting at most
     * 200 ms (MariaDB: 1 s) for fenced transactions in progress, while new checks wait behind it; the batch itself
     * takes milliseconds. Not granted in time, the batch changes nothing and is tried again, up to 5 times.
     *
     * @throws org.springframework.dao.CannotAcquireLockException when a batch could not lock the table in 5 attempts
     *                                                            (what earlier batches folded stays folded)
     */
    @Override
    public CompactionResult compact(Duration idleFor, int batchSize, IssuerFloors issuer) {
        store.noteCompacted(); // from now on its checks above READ COMMITTED are refused (PostgreSQL, H2)
        return compactor.compact(idleFor, batchSize, issuer);
    }

    /**
     * {@inheritDoc} Read from the family's floor row ({@link FenceSql#familyFloorKey}); a row holding 0 (which a
     * MariaDB store creates for each family it checks) is no floor.
     */
    @Override
    public OptionalLong familyFloor(String family) {
        if (family == null || family.isBlank()) {
            throw new IllegalArgumentException("familyFloor: family must not be blank, was '" + family + "'");
        }
        OptionalLong floor = maxSeen(FenceSql.familyFloorKey(family));
        return floor.isPresent() && floor.getAsLong() == 0 ? OptionalLong.empty() : floor; // 0: no floor
    }

    /** The committed max_seen of {@code resource}, empty when it never accepted a token. */
    @Override
    public OptionalLong maxSeen(String resource) {
        store.verifyTable();
        Long value = store.jdbc().query(maxSeenSql, rs -> rs.next() ? rs.getLong(1) : null, resource);
        return value == null ? OptionalLong.empty() : OptionalLong.of(value);
    }

    /** {@inheritDoc} Keyset pages ({@code resource > ?}) in the database's order of the resource column. */
    @Override
    public List<String> resources(String after, int limit) {
        FenceInventory.checkLimit(limit);
        store.verifyTable();
        JdbcDialect dialect = store.dialect();
        String sql = dialect.resourcesSql(store.table(), after != null, limit);
        return after == null ? store.jdbc().queryForList(sql, String.class)
                : store.jdbc().queryForList(sql, String.class, after);
    }

    @Override
    public OptionalLong highestMaxSeen() {
        store.verifyTable();
        Long value = store.jdbc().queryForObject(store.dialect().highestMaxSeenSql(store.table()), Long.class);
        return value == null ? OptionalLong.empty() : OptionalLong.of(value);
    }

    /**
     * Raises max_seen of {@code resource} to at least {@code value}, with no holder, so that tokens up to and
     * including {@code value} are rejected; never lowers it. For restoring a floor known from elsewhere (for
     * example the last token a previous lock service issued). Joins the caller's transaction on the store's
     * transaction manager, or runs in one of its own. Not subject to the store's {@code maxAdvance}. Waits for the
     * resource's row at most the store's {@code lockTimeout}, as a check does.
     *
     * @throws FenceBusyException the row stayed held longer than the store's {@code lockTimeout}; nothing changed
     */
    @Override
    public void raiseFloor(String resource, long value) {
        if (resource == null || resource.isBlank()) {
            throw new IllegalArgumentException("resource must not be blank");
        }
        if (value <= 0) {
            throw new IllegalArgumentException("floor for resource '" + resource + "' must be positive, was " + value);
        }
        store.verifyTable();
        store.transactions().executeWithoutResult(status -> underStoreLockTimeout(() -> {
            // the row's lock waited for at most the store's bound, as a check's and a reset's
            store.jdbc().query(store.floorSql(), ps -> {
                JdbcFenceStore.bind(ps, store.dialect().fenceSql().checkParameters(resource, value, null));
            }, rs -> null);
            // the check leaves a row at max_seen == value as it was: its holder would still pass with 'value'
            store.jdbc().update(store.dialect().clearHolderAtSql(store.table()), resource, value);
            return null;
        }, busy -> new FenceBusyException(resource, null, "Floor raise of resource '" + resource + "' to " + value
                + ": its fence row in table '" + store.table() + "' stayed held by another transaction (a fenced "
                + "writer, or a paused one) for more than the store's lock timeout of "
                + store.lockTimeout().toMillis() + " ms; " + (status.isNewTransaction() ? "nothing changed, try again"
                : "the raise changed nothing, but the transaction it joined may be aborted (PostgreSQL aborts it): "
                + "roll it back and try again"), busy)));
    }

    /**
     * {@inheritDoc} Locks the resource's fence row ({@code SELECT ... FOR UPDATE}, waiting at most the store's
     * {@code lockTimeout} for a fenced transaction that holds it), then updates it (or, for 0, deletes it), in the
     * caller's transaction on the store's transaction manager or in one of its own. A check waiting for the row
     * meanwhile is judged after this transaction ends, against the row as it then stands or, when it was deleted,
     * against the resource's family floor.
     *
     * @throws ResetRefusedException the row stayed held longer than the store's {@code lockTimeout}; nothing changed
     */
    @Override
    public long lowerMaxSeen(String resource, long floor) {
        return lower(resource, floor, -1);
    }

    /** {@inheritDoc} Judged on the locked row, in the transaction that lowers it. */
    @Override
    public long lowerMaxSeen(String resource, long floor, long expected) {
        return lower(resource, floor, FenceAdmin.checkExpected(resource, expected));
    }

    /** Lowers max_seen of {@code resource} to {@code floor}, only while it is {@code expected} unless that is -1. */
    private long lower(String resource, long floor, long expected) {
        FenceAdmin.checkLowering(resource, floor);
        store.verifyTable();
        JdbcDialect dialect = store.dialect();
        String table = store.table();
        return store.transactions().execute(status -> {
            Long current = lockRow(resource, status.isNewTransaction());
            if (current == null) {
                throw FenceAdmin.unknownResource(resource);
            }
            if (expected >= 0 && current != expected) {
                throw FenceAdmin.changedMeanwhile(resource, expected, current);
            }
            if (floor > current) {
                throw FenceAdmin.notLowering(resource, floor, current);
            }
            if (floor == 0) {
                store.jdbc().update(dialect.forgetSql(table), resource);
            } else {
                store.jdbc().update(dialect.lowerSql(table), floor, resource);
            }
            return current;
        });
    }

    /**
     * Locks the resource's row, waiting at most the store's lock wait bound as a check does (the connection's bound
     * put back afterwards); returns its max_seen, {@code null} without a row.
     */
    private Long lockRow(String resource, boolean ownTransaction) {
        return underStoreLockTimeout(() -> store.jdbc().query(
                store.dialect().boundedLockMaxSeenSql(store.table(), store.lockTimeout()),
                rs -> rs.next() ? rs.getLong(1) : null, resource),
                // the database's text stays in the cause (logs), out of the message an HTTP client may see
                busy -> new ResetRefusedException(resource, "Reset of resource '" + resource + "' refused: its fence "
                        + "row in table '" + store.table() + "' stayed held by another transaction (a fenced writer, "
                        + "or a paused one) for more than the store's lock timeout of "
                        + store.lockTimeout().toMillis() + " ms; " + (ownTransaction ? "nothing changed, try again"
                        : "the reset changed nothing, but the transaction it joined may be aborted (PostgreSQL "
                        + "aborts it): roll it back and try again"), busy));
    }

    /**
     * Runs {@code work} on the store's connection with the store's lock wait bound swapped in (the connection's own
     * put back afterwards); a wait that ran out is thrown as {@code busy} makes it, unless the database rolled the
     * transaction back (then as it came).
     */
    private <T> T underStoreLockTimeout(Supplier<T> work, Function<CannotAcquireLockException, RuntimeException> busy) {
        JdbcDialect dialect = store.dialect();
        String previous = null;
        boolean failed = false;
        try {
            previous = store.swapInLockTimeout();
            return work.get();
        } catch (CannotAcquireLockException e) {
            failed = true;
            if (rolledBack(e)) {
                throw e;
            }
            throw busy.apply(e);
        } catch (RuntimeException e) {
            failed = true;
            throw e;
        } finally {
            if (previous != null && (!failed || dialect.restoresLockTimeoutAfterFailure())) {
                putBack(store.jdbc(), dialect.setLockTimeoutSql(previous), failed);
            }
        }
    }

    /** Puts the connection's lock wait bound back; after a failure, the failure is the one to report. */
    private static void putBack(JdbcTemplate jdbc, String setLockTimeout, boolean failed) {
        try {
            jdbc.execute(setLockTimeout);
        } catch (RuntimeException e) {
            if (!failed) {
                throw e;
            }
        }
    }

    /** Whether the database rolled back the transaction (SQLSTATE class 40: deadlock, serialization failure). */
    private static boolean rolledBack(CannotAcquireLockException e) {
        for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
            if (cause instanceof java.sql.SQLException sql) {
                return sql.getSQLState() != null && sql.getSQLState().startsWith("40");
            }
        }
        return false;
    }
}
