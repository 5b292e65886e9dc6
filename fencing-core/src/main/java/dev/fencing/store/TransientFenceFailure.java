package dev.fencing.store;

import dev.fencing.token.FencingToken;

/**
 * Implemented by a store's exception when the check did not run to a verdict for a reason that passes: the fence
 * lock of the resource stayed taken past the store's lock wait bound ({@link Reason#BUSY}), or the database aborted
 * the check as a serialization failure or deadlock ({@link Reason#CONFLICT}). Nothing the transaction wrote persisted,
 * so the whole operation may be retried (with the same token, or a newer one); unless {@link #afterBody()}, the
 * fenced method's body did not run either. An interface, so that a
 * store can also extend its framework's retryable exception type (the JDBC store's extend Spring's
 * {@code ConcurrencyFailureException}); the guard counts it under {@code busy} or {@code conflict}.
 */
public interface TransientFenceFailure {

    /** Why the check could not run. */
    enum Reason {
        /** The resource's fence lock was held by another writer longer than the store waits. */
        BUSY,
        /** The database aborted the check's transaction (serialization failure, deadlock). */
        CONFLICT
    }

    /** Why the check could not run. */
    Reason reason();

    /** The effective resource being checked. */
    String resource();

    /** The token that was being checked; the guard compares it by identity with the one it presented. */
    FencingToken presented();

    /**
     * Whether this came after the fenced method's body ran: a check sent with COMMIT (the JDBC store's
     * {@code checkAtCommit}), or the commit of a transaction the store opened. Its database writes rolled back, but
     * what the body did outside the database (a message sent, a file written, a call made) happened, and a retry
     * does it again. {@code false} by default: the check failed before the body ran.
     */
    default boolean afterBody() {
        return false;
    }
}
