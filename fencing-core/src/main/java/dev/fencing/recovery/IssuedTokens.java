package dev.fencing.recovery;

/**
 * What a token issuer knows about a resource, for recovery: the highest token it ever issued for it and whether a
 * lease on it is held now. A max_seen above the highest issued token did not come from the issuer, so lowering
 * max_seen to that value (never below) lets the next holder in while every earlier token stays refused.
 */
public interface IssuedTokens {

    /**
     * An upper bound of every token this issuer has issued for {@code resource}, read now (0 when it never issued
     * one). Exact for issuers with a per-resource counter; a lock service's current global counter is a valid, larger
     * bound.
     */
    long highestIssued(String resource);

    /** Whether a lease on {@code resource} is held now (taken, not released, not expired). */
    boolean isHeld(String resource);

    /**
     * Whether this issuer's tokens come from one sequence for every resource (ZooKeeper's zxid, etcd's revision):
     * {@link #highestIssued} is then that sequence's current value whatever the resource, an upper bound of every
     * token issued for any resource, and a fence store's max_seen above it cannot have come from this issuer.
     * {@code false} (the default) for an issuer with a counter per resource (the JDBC lease, in-memory).
     */
    default boolean oneSequence() {
        return false;
    }

    /**
     * For an issuer of one sequence ({@link #oneSequence()}): refuse from now on to hand out a token at or below
     * {@code token}, a bound read elsewhere while the sequence itself could not be read, such as the fence store's
     * highest max_seen at a startup during a lock service outage. A token of the sequence at or below it means the
     * sequence went back (the service restarted on an empty data dir, another one at its address); an issuer that
     * had read the sequence before would refuse it the same way. Raises, never lowers. The default does nothing: an
     * issuer with a counter per resource, or one that does not watch its sequence.
     *
     * @param source where {@code token} comes from, for the refusal's message
     */
    default void requireAbove(long token, String source) {
    }
}
