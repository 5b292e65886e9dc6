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
}
