package dev.fencing.guard;

import dev.fencing.issuer.Lease;

/**
 * When an acquiring fence point gives its lock back. {@link #IMMEDIATE} releases it as the fenced call returns. A
 * scope that knows the caller's unit of work (fencing-spring's, for Spring transactions) releases it only when that
 * unit has completed, so the next holder cannot read what this one wrote before it is committed, and hands the lease
 * it still holds to a later acquiring call for the same resource in that unit instead of letting it wait for itself.
 */
public interface LeaseScope {

    /** Releases each lease when its fenced call returns; holds none. */
    LeaseScope IMMEDIATE = new LeaseScope() {
        @Override
        public Lease held(String resource) {
            return null;
        }

        @Override
        public void release(Lease lease) {
            lease.close();
        }
    };

    /**
     * A lease on {@code resource} this scope has been given and not yet released (the current unit of work holds the
     * lock), for an acquiring call to reuse; {@code null} when there is none.
     */
    Lease held(String resource);

    /**
     * Releases {@code lease}, now or when the current unit of work completes. A failure to release now is thrown; a
     * deferred release that fails is the scope's to report (the lease's own expiry frees the lock then).
     */
    void release(Lease lease);
}
