package dev.fencing.store;

/**
 * The verdict of a check that a {@link FenceStore} reaches after {@code fence} returned: a store that runs the
 * guarded write first and judges the token later (at its transaction's commit) gets one from
 * {@link FencedCall#deferVerdict()} before running the write, and reports exactly one outcome on it once known, or
 * none when the unit of work ended without a verdict (rolled back before the check ran). The caller of the store
 * (the fence guard) counts and reports the check through it instead of when {@code fence} returns.
 */
public interface DeferredVerdict {

    /** A verdict nobody counts: what a {@link FencedCall} that does not track checks hands out. */
    DeferredVerdict NONE = new DeferredVerdict() {
        @Override
        public void accepted() {
        }

        @Override
        public RuntimeException failed(RuntimeException failure) {
            return failure;
        }
    };

    /** The check accepted the token and the write committed with it. */
    void accepted();

    /**
     * The check failed with {@code failure}: a {@link dev.fencing.rule.TokenRejectedException} carrying the presented
     * token, a {@link TransientFenceFailure} or a {@link FenceStoreException}; the write did not persist.
     *
     * @return the exception to throw in its place (a rejection named at the fenced operation, for example)
     */
    RuntimeException failed(RuntimeException failure);
}
