package dev.fencing.retention;

/**
 * An issuer with a counter per resource whose counters can be raised: the repair after the counters were lost or
 * restored (a Redis restart without persistence, a lease table restored from a backup), which otherwise leaves every
 * resource refusing its next tokens until the counter creeps past the fence store's max_seen. A
 * {@link dev.fencing.recovery.FloorRaise} given a value raises each resource's counter to it before the store's
 * max_seen.
 */
public interface CounterFloors {

    /**
     * Makes every token issued from now on for {@code resource} larger than {@code floor}. Durable when the issuer
     * is; idempotent; never lowers anything; a lease held now keeps its token.
     *
     * @throws IllegalArgumentException when {@code resource} cannot be locked or {@code floor} is negative
     */
    void raiseResourceFloor(String resource, long floor);
}
