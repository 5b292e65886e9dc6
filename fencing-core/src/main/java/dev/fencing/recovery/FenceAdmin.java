package dev.fencing.recovery;

import java.util.OptionalLong;

/**
 * The administrative side of a fence store: read a resource's max_seen, raise it to a floor, lower it. Each call is
 * atomic per resource against the store's checks, so a raise or a lowering waits for a fenced write in progress on
 * the resource, for a bounded time (the JDBC stores' {@code lockTimeout}, the in-memory store's {@code adminWait}),
 * after which it fails and changes nothing. Lowering is the raw step of a recovery; operators go through
 * {@link MaxSeenReset}, which checks it against the issuer, logs it and counts it.
 */
public interface FenceAdmin {

    /**
     * The committed max_seen of {@code resource}, empty when it never accepted a token. For a resource of a compacted
     * family that has no state of its own (folded, or never checked), stores differ: the in-memory store answers the
     * family's floor (what judges it), the JDBC store empty (no row); a caller that must tell "raised on its own"
     * from "judged by the floor" compares with the floor ({@code maxSeen(FenceSql.familyFloorKey(family))}), as
     * {@link FloorRaise} does.
     */
    OptionalLong maxSeen(String resource);

    /**
     * Raises max_seen of {@code resource} to at least {@code value}, with no holder, so that tokens up to and including
     * {@code value} are refused; never lowers it.
     *
     * @throws IllegalArgumentException when the resource is blank or {@code value} is not positive
     */
    void raiseFloor(String resource, long value);

    /**
     * Lowers max_seen of {@code resource} to {@code floor}, with no holder, so that tokens up to and including
     * {@code floor} stay refused and any larger one is accepted again; {@code floor} 0 forgets the resource (its next
     * token is a first one). Returns max_seen as it was.
     *
     * @throws IllegalArgumentException when the resource is blank or has no max_seen, or {@code floor} is negative or
     *                                  above the current max_seen; nothing changed
     * @throws ResetRefusedException    when the store refuses the change for now (for example a lock it needs was
     *                                  not granted in time; the built-in stores wait for the resource's row only);
     *                                  nothing changed, retry
     */
    long lowerMaxSeen(String resource, long floor);

    /**
     * {@link #lowerMaxSeen(String, long)} only while max_seen is still {@code expected}, the value its caller read
     * before it chose {@code floor}, judged atomically with the lowering: a token accepted in between (a new holder
     * that wrote while the reset read the issuer) is not undone, and the tokens below it stay refused.
     * {@link MaxSeenReset} lowers this way. The default refuses: a store must do it atomically, not in two steps.
     *
     * @throws ResetRefusedException         when max_seen is no longer {@code expected}, or as
     *                                       {@link #lowerMaxSeen(String, long)}; nothing changed, retry
     * @throws IllegalArgumentException      as {@link #lowerMaxSeen(String, long)}
     * @throws UnsupportedOperationException when this store cannot lower conditionally
     */
    default long lowerMaxSeen(String resource, long floor, long expected) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot lower max_seen only while it is still "
                + "the value a reset read; implement FenceAdmin.lowerMaxSeen(String, long, long)");
    }

    /** The argument check of {@link #lowerMaxSeen}, for implementations. */
    static void checkLowering(String resource, long floor) {
        if (resource == null || resource.isBlank()) {
            throw new IllegalArgumentException("resource must not be blank");
        }
        if (floor < 0) {
            throw new IllegalArgumentException("new max_seen for resource '" + resource
                    + "' must not be negative, was " + floor);
        }
    }

    /** The refusal of {@link #lowerMaxSeen} for a resource without max_seen, for implementations. */
    static IllegalArgumentException unknownResource(String resource) {
        return new IllegalArgumentException("resource '" + resource + "' has no max_seen in this store (never fenced, "
                + "folded into its family's floor by compaction, or the name is misspelt); nothing to lower (a family "
                + "floor no issuer reached is lowered by hand: docs/operations.md, \"A family floor no issuer "
                + "reached\")");
    }

    /**
     * The argument check of {@link #lowerMaxSeen(String, long, long)}'s {@code expected}, for implementations; returns
     * it.
     */
    static long checkExpected(String resource, long expected) {
        if (expected < 0) {
            throw new IllegalArgumentException("expected max_seen of resource '" + resource + "' must not be negative, "
                    + "was " + expected);
        }
        return expected;
    }

    /**
     * The refusal of {@link #lowerMaxSeen(String, long, long)} when max_seen moved since its caller read it, for
     * implementations.
     */
    static ResetRefusedException changedMeanwhile(String resource, long expected, long now) {
        return new ResetRefusedException(resource, "Reset of resource '" + resource + "' refused: its max_seen moved "
                + "from " + expected + " to " + now + " while the reset was deciding (a token was accepted meanwhile, "
                + "which lowering would undo); nothing changed, look again and retry");
    }

    /** The refusal of {@link #lowerMaxSeen} for a floor above max_seen, for implementations. */
    static IllegalArgumentException notLowering(String resource, long floor, long maxSeen) {
        return new IllegalArgumentException("new max_seen " + floor + " for resource '" + resource
                + "' is above its current max_seen " + maxSeen + "; lowering cannot raise it (use raiseFloor)");
    }
}
