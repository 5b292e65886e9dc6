package dev.fencing.retention;

import dev.fencing.metrics.CompactionMetrics;

import java.time.Duration;
import java.util.Objects;

/**
 * One configured compaction of a fence store (and of its issuer's per-resource state, where it keeps one): which
 * store, which issuer's floors, how idle a resource must be and how many resources go in one atomic unit.
 * {@link #runOnce()} compacts and reports (the command-line and actuator form); {@link #run()} is the scheduled form,
 * which logs and counts a failure instead of throwing so the schedule goes on. Every run is logged (folded resources at
 * INFO, failures at WARNING) and counted ({@link CompactionMetrics}).
 */
public final class CompactionRun implements Runnable {

    private static final System.Logger LOG = System.getLogger(CompactionRun.class.getName());

    private final FenceCompaction store;
    private final IssuerFloors issuer;
    /** The longest idle time: a century, still a timestamp every supported database can hold when subtracted. */
    static final Duration MAX_IDLE_FOR = Duration.ofDays(36_500);

    private final Duration idleFor;
    private final int batchSize;
    private final CompactionMetrics metrics;
    private final IssuerCompaction issuerState;

    /**
     * @param store     the store to compact
     * @param issuer    the issuer of the store's tokens, told of each floor before the store raises it
     *                  ({@link IssuerFloors#ONE_SEQUENCE} for an issuer with one sequence for every resource)
     * @param idleFor   how long a resource must have gone without an accepted token to be folded; positive
     * @param batchSize resources per atomic unit; at least 1
     * @param metrics   where runs are counted
     * @throws IllegalArgumentException naming the value, when {@code idleFor} is not positive or above a century, or
     *                                  {@code batchSize} is below 1
     */
    public CompactionRun(FenceCompaction store, IssuerFloors issuer, Duration idleFor, int batchSize,
                         CompactionMetrics metrics) {
        this(store, issuer, null, idleFor, batchSize, metrics);
    }

    /**
     * As {@link #CompactionRun(FenceCompaction, IssuerFloors, Duration, int, CompactionMetrics)}, also folding the
     * issuer's own per-resource state (the JDBC lease table) after the store's, with the same age and batch size.
     *
     * @param issuerState the issuer's retention side, or {@code null} when it keeps nothing per resource
     */
    public CompactionRun(FenceCompaction store, IssuerFloors issuer, IssuerCompaction issuerState, Duration idleFor,
                         int batchSize, CompactionMetrics metrics) {
        this.issuerState = issuerState;
        this.store = Objects.requireNonNull(store, "store");
        this.issuer = Objects.requireNonNull(issuer, "issuer (IssuerFloors.ONE_SEQUENCE for a one-sequence issuer)");
        this.idleFor = Objects.requireNonNull(idleFor, "idleFor");
        if (idleFor.isNegative() || idleFor.isZero()) {
            throw new IllegalArgumentException("compaction idle time must be positive, was " + idleFor);
        }
        if (idleFor.compareTo(MAX_IDLE_FOR) > 0) {
            // now minus such a span is before any timestamp a database keeps: every run would fail
            throw new IllegalArgumentException("compaction idle time must be at most " + MAX_IDLE_FOR.toDays()
                    + " days, was " + idleFor);
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("compaction batch size must be at least 1, was " + batchSize);
        }
        this.batchSize = batchSize;
        this.metrics = Objects.requireNonNull(metrics, "metrics");
    }

    /**
     * Compacts now, once.
     *
     * @throws RuntimeException whatever the store throws (counted as a failed run); what it committed stays committed
     */
    public CompactionResult runOnce() {
        CompactionResult result = null;
        CompactionResult issued = CompactionResult.NONE;
        try {
            result = store.compact(idleFor, batchSize, issuer);
            log("fence", result);
            if (issuerState != null) {
                issued = issuerState.compact(idleFor, batchSize);
                log("issuer", issued);
            }
        } catch (RuntimeException | Error e) {
            // the store's part committed before the issuer's failed: what it folded is gone, so it is counted
            metrics.failed(result == null ? 0 : result.folded());
            throw e;
        }
        metrics.ok(result.folded(), issued.folded());
        return result;
    }

    /**
     * What the last part of {@link #runOnce()} reports about the issuer's state is logged and counted
     * ({@code fencing.compaction.folded{state=issuer}}); the returned result is the fence store's.
     */
    private void log(String state, CompactionResult result) {
        if (result.folded() > 0) {
            LOG.log(System.Logger.Level.INFO, () -> "Compaction folded the " + state + " state of " + result.folded()
                    + " resources idle for over " + idleFor + " into the floors of " + result.families()
                    + " families, in " + result.batches() + (result.batches() == 1 ? " transaction" : " transactions"));
        } else {
            LOG.log(System.Logger.Level.DEBUG, () -> "Compaction found no " + state + " state idle for over "
                    + idleFor);
        }
    }

    /** Compacts once, logging a failure at WARNING instead of throwing it (for a scheduler). */
    @Override
    public void run() {
        try {
            runOnce();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "Compaction of the fence state failed; it runs again at its next "
                    + "time, and nothing it had not committed changed", e);
        }
    }

    /** How long a resource must have gone without an accepted token to be folded. */
    public Duration idleFor() {
        return idleFor;
    }

    /** Resources per atomic unit. */
    public int batchSize() {
        return batchSize;
    }
}
