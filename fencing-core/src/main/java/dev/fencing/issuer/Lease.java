package dev.fencing.issuer;

import dev.fencing.token.FencingToken;

/**
 * One acquisition of a lock from a {@link TokenIssuer}: the token it produced, whether it was released, and whether
 * the lock service dropped it while it was held. A lost lease is exactly the zombie case: its token still exists, and
 * the fence, not the lease, stops its writes.
 *
 * <p>A lease releases itself: {@link #close()} gives the lock back (ShedLock's {@code SimpleLock.unlock()} is the
 * model), so it fits a try-with-resources block:
 * <pre>{@code
 * try (Lease lease = issuer.acquire("ledger", Duration.ofSeconds(5))) {
 *     ... // write with lease.token()
 * }
 * }</pre>
 */
public interface Lease extends AutoCloseable {

    /** The fencing token of this acquisition; its holder identifies the acquisition. */
    FencingToken token();

    /**
     * Whether the lock service dropped this lease while it was held (its session expired, its lease time ran out,
     * another holder took the lock over). A normal {@link #close() release} does not make a lease lost.
     */
    boolean isLost();

    /** Whether {@link #close()} was called on this lease. */
    boolean isReleased();

    /** Neither released nor lost: as far as this process knows, the lock service still considers it held. */
    default boolean isHeld() {
        return !isReleased() && !isLost();
    }

    /**
     * Releases the lock. Idempotent: only the first call contacts the lock service. Quiet for a lost lease (the lock
     * is gone already; the loss is counted, not thrown), and a lock that another holder has taken over is left
     * alone. An interrupt does not stop a release: the thread's interrupt status is kept for the caller.
     *
     * @throws IllegalStateException (or the lock service's own unchecked exception) when a lease that was not lost
     *                               could not be released
     */
    @Override
    void close();

    /**
     * {@code lease} presenting {@code token} instead of its own: what an issuer that decorates another (one that
     * signs or shifts its tokens) hands out. Released, lost and held are {@code lease}'s, and closing it releases
     * {@code lease}.
     */
    static Lease presenting(Lease lease, FencingToken token) {
        return new PresentedLease(lease, token);
    }
}
