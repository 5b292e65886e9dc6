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
}
