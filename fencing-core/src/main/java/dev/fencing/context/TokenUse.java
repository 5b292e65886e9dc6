package dev.fencing.context;

/**
 * Whether the token of one acquired lock was used while the lock was held: presented to a check (read through
 * {@link FencingContext#current} or {@link FencingSnapshot#present}) or sent to another process by a carrier
 * ({@link FencingSnapshot#markSent}). An acquiring call binds its token with one ({@link FencingContext#bindAcquired},
 * {@link FencingSnapshot#withAcquired}); the binding carries it to other threads and into reactive contexts, so a check
 * there counts too. A call that ends with its token unused wrote nothing a fence checked. Thread-safe.
 */
public final class TokenUse {

    private volatile boolean used;

    /** Records that the token was presented or sent; cheap to call again. */
    public void markUsed() {
        if (!used) {
            used = true;
        }
    }

    /** Whether {@link #markUsed()} was called. */
    public boolean isUsed() {
        return used;
    }
}
