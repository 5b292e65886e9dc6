package dev.fencing.store;

import dev.fencing.token.FencingToken;

/**
 * Where a resource remembers max_seen and enforces {@link dev.fencing.rule.FenceRule}. One method: check the token
 * and advance max_seen, then run the write, atomically per resource: once a write with token 34 has been accepted,
 * a write checked earlier with 33 must not be applied after it. Implementations get atomicity from a lock held
 * through the write (in memory) or from the caller's transaction (a database).
 */
public interface FenceStore {

    /**
     * Checks {@code token} against max_seen of {@code resource}; when accepted, advances max_seen and runs
     * {@code write} inside the same atomic unit, returning its result.
     *
     * @param resource the effective resource; must equal {@code token.resource()}
     * @param token    the presented token
     * @param write    the guarded write, run at most once and only when the token is accepted
     * @throws dev.fencing.rule.TokenRejectedException when rejected (created by this store, carrying this very
     *                                              {@code token}); the write did not run and nothing changed
     * @throws FenceStoreException                 when the store cannot reach a verdict (carrying this very
     *                                              {@code token}); the write did not run
     * @throws IllegalArgumentException             when the token was issued for another resource
     * @throws NullPointerException                 when {@code resource} or {@code write} is {@code null}: refused
     *                                              before the check, naming the other arguments; nothing changed
     * @throws Throwable                            whatever the write throws, unchanged
     */
    <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable;

    /**
     * Why this store cannot check tokens for the declared resource {@code resource} (as written in
     * {@code @Fenced(resource = ...)}, covering its keyed forms), or {@code null} when it can. Asked once per fence
     * point, at startup where possible, so that a resource no store guards fails there instead of refusing every
     * call. The default: {@code null}, every resource is guarded.
     */
    default String unguarded(String resource) {
        return null;
    }

    /**
     * Checks that this store can fence every resource the library accepts (up to
     * {@link FencingToken#MAX_PART_LENGTH} characters): for a database, that its table exists and has the columns,
     * types, widths and keys the check needs. {@code @EnableFencing} calls it once the application context is
     * complete, after the application's own database initialization; a store that was never verified verifies itself
     * before its first check. Idempotent; the default checks nothing.
     *
     * @throws dev.fencing.FencingConfigurationException saying what is wrong and how to fix it
     */
    default void verify() {
    }

    /**
     * Whether this store reaches its verdict only after {@link #fence} returned (at its transaction's commit, see
     * {@link FencedCall#deferVerdict()}): such a store runs the write before judging it, so it cannot let a refused
     * call through, and observe mode ({@link dev.fencing.mode.FenceMode#OBSERVE}) is refused for it at startup. The
     * default is {@code false}.
     */
    default boolean judgesAtCommit() {
        return false;
    }

    /**
     * Whether this store may judge {@code resource} (as declared in {@code @Fenced(resource = ...)}, or any of its
     * keyed forms) only at commit; {@code null} asks about any resource. What observe mode is refused for, per
     * resource. The default is {@link #judgesAtCommit()} for every resource; a store that sends resources to stores of
     * different kinds ({@link RoutingFenceStore}) answers per resource.
     */
    default boolean judgesAtCommit(String resource) {
        return judgesAtCommit();
    }
}
