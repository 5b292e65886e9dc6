package dev.fencing.store.sql;

import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Internal: for the store modules (fencing-jdbc, fencing-r2dbc); not an API. MariaDB: has the floor row of each family
 * a store checks created ({@link FenceSql#floorRowSql}, holding 0: no floor) unless it is known to exist. A check's
 * locking read of a missing floor row takes a shared lock on the gap before the family's first resource (REPEATABLE
 * READ), and two first checks of new resources in that gap then deadlock; once the row exists the read locks that row
 * only. The row is created asynchronously, in a transaction of its own, so that a check neither waits for it nor
 * takes a second connection while it holds one: a family's first checks in a table run as before, every later one
 * (in any process) without the gap lock. A failed creation is logged and tried again by a check at least
 * {@link #RETRY_NANOS} later; a row known to exist is made sure of again every {@link #REFRESH_NANOS}, so that one
 * deleted by hand (a truncated table between tests) comes back without a restart.
 */
public final class FloorRows {

    private static final System.Logger LOG = System.getLogger(FloorRows.class.getName());

    /** How many floor keys are remembered before starting over (a family then costs one no-op insert again). */
    public static final int REMEMBERED = 10_000;

    /** A failed creation is tried again at most this often (10 s), by the next check of the family after that. */
    public static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(10);

    /**
     * Starts creating one floor row without waiting for it, and reports the end: {@code created} or {@code failed},
     * exactly once, from any thread.
     */
    @FunctionalInterface
    public interface Creator {
        void start(String floorKey, Runnable created, Consumer<Throwable> failed);
    }

    /** A floor row known to exist is made sure of again after this long (10 min): a no-op insert when it does. */
    public static final long REFRESH_NANOS = TimeUnit.MINUTES.toNanos(10);

    private static final Object PENDING = new Object();

    /** The row existed, or was created, at {@code nanoTime}. */
    private record Done(long nanoTime) {
    }

    /** The creation failed at {@code nanoTime}. */
    private record Failed(long nanoTime) {
    }

    private final Creator creator;
    private final String table;
    private final long retryNanos;
    private final long refreshNanos;
    /** Each floor key's state: {@link Done}, {@link #PENDING} or {@link Failed}. */
    private final ConcurrentHashMap<String, Object> floorKeys = new ConcurrentHashMap<>();

    /** Floor rows of {@code table} (named in the log), created by {@code creator}. */
    public FloorRows(String table, Creator creator) {
        this(table, creator, RETRY_NANOS, REFRESH_NANOS);
    }

    FloorRows(String table, Creator creator, long retryNanos, long refreshNanos) {
        this.table = Objects.requireNonNull(table, "table");
        this.creator = Objects.requireNonNull(creator, "creator");
        this.retryNanos = retryNanos;
        this.refreshNanos = refreshNanos;
    }

    /**
     * Has the floor row {@code floorKey} ({@link FenceSql#floorKeyOf}) created unless it is being created, failed
     * less than {@link #RETRY_NANOS} ago, or was known to exist less than {@link #REFRESH_NANOS} ago (so that a row
     * deleted by hand comes back). Never blocks and never throws.
     */
    public void ensure(String floorKey) {
        Object state = floorKeys.get(floorKey);
        if (state == PENDING) {
            return;
        }
        if (state == null) {
            if (floorKeys.size() >= REMEMBERED) {
                floorKeys.clear();
            }
            if (floorKeys.putIfAbsent(floorKey, PENDING) != null) {
                return;
            }
        } else {
            long at = state instanceof Done done ? done.nanoTime() : ((Failed) state).nanoTime();
            long wait = state instanceof Done ? refreshNanos : retryNanos;
            if (System.nanoTime() - at < wait || !floorKeys.replace(floorKey, state, PENDING)) {
                return;
            }
        }
        try {
            creator.start(floorKey, () -> floorKeys.put(floorKey, new Done(System.nanoTime())),
                    e -> failed(floorKey, e));
        } catch (RuntimeException e) {
            failed(floorKey, e);
        }
    }

    /** Whether the row {@code floorKey} is known to exist (created, or found existing, by this store). */
    public boolean exists(String floorKey) {
        return floorKeys.get(floorKey) instanceof Done;
    }

    private void failed(String floorKey, Throwable e) {
        floorKeys.replace(floorKey, PENDING, new Failed(System.nanoTime()));
        LOG.log(System.Logger.Level.WARNING, () -> "Could not create the floor row of family '"
                + FenceSql.familyOfFloorKey(floorKey) + "' in fence table '" + table + "' (a check of the "
                + "family at least 10 s later tries again; until then concurrent first checks of its resources may "
                + "end in a retryable deadlock): " + e);
    }
}
