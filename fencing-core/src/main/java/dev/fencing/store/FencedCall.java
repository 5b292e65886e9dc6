package dev.fencing.store;

/**
 * The guarded write a {@link FenceStore} runs once the token is accepted: the fenced method's body.
 *
 * @param <T> the result type
 */
@FunctionalInterface
public interface FencedCall<T> {

    /** Runs the write; any exception passes through the store unchanged. */
    T proceed() throws Throwable;

    /**
     * Called by a store that will reach its verdict only after {@code fence} returns (the JDBC store's check at
     * commit), once, before it runs the write: from then on the caller counts the check through the returned object,
     * not by {@code fence} returning. Stores that judge before the write never call it. The default returns
     * {@link DeferredVerdict#NONE}.
     */
    default DeferredVerdict deferVerdict() {
        return DeferredVerdict.NONE;
    }

    /**
     * Whether the caller goes on in the same unit of work after a rejection: {@code true} for a check in observe mode
     * ({@link dev.fencing.mode.FenceMode#OBSERVE}), whose caller runs the write itself, outside the fence, when the
     * store rejects the token. A store that checks inside the caller's transaction must then leave that transaction
     * usable when it rejects (not marked rollback-only); it still throws the rejection, changes nothing and does not
     * run the write. The default is {@code false}.
     */
    default boolean continuesAfterRejection() {
        return false;
    }
}
