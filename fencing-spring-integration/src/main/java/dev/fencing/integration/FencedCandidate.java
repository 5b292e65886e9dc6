package dev.fencing.integration;

import dev.fencing.context.FencingContext;
import dev.fencing.context.TokenUse;
import dev.fencing.token.FencingToken;
import org.springframework.integration.leader.AbstractCandidate;
import org.springframework.integration.leader.Context;

/**
 * A leader-election {@code Candidate} for a {@code LockRegistryLeaderInitiator} over a {@link FencedLockRegistry}:
 * each grant hands the leadership's token (the lease of the role's lock, held by the initiator's thread) to
 * {@link #onGranted(Context, FencingToken)}. Bind that token where the leader's work runs; a deposed leader's work
 * keeps the token it was given, the old epoch, and its writes are refused once the next leader has written.
 */
public abstract class FencedCandidate extends AbstractCandidate {

    private final FencedLockRegistry registry;

    /**
     * @param registry the registry the initiator locks the role in (the same instance)
     * @param id       this candidate's id
     * @param role     the role, which is also the lock key
     */
    protected FencedCandidate(FencedLockRegistry registry, String id, String role) {
        super(id, role);
        if (registry == null) {
            throw new IllegalArgumentException("FencedCandidate for role '" + role + "' needs its FencedLockRegistry");
        }
        registry.obtain(role); // the role must be a lock key the registry accepts: fail here, not at the first grant
        this.registry = registry;
    }

    private static final System.Logger LOG = System.getLogger(FencedCandidate.class.getName());

    /** Whether a registry mismatch was logged; written on the initiator's one thread. */
    private volatile boolean mismatchLogged;

    /**
     * Reads the token of the role's lock on the initiator's thread, which holds it, and calls
     * {@link #onGranted(Context, FencingToken)}.
     *
     * @throws IllegalMonitorStateException when the initiator's registry is not this candidate's
     */
    @Override
    public final void onGranted(Context context) throws InterruptedException {
        FencedLock lock = registry.obtain(getRole());
        FencingToken token = lock.isHeldByCurrentThread() ? lock.token() : heldOnThisThread(lock.resource());
        if (token == null) {
            IllegalMonitorStateException mismatch = new IllegalMonitorStateException("FencedCandidate '" + getId()
                    + "' was granted role '" + getRole() + "' by a LockRegistryLeaderInitiator that does not lock it "
                    + "in this candidate's " + registry + ": give the initiator the same registry (the current "
                    + "thread, " + Thread.currentThread().getName() + ", holds no lock on resource '"
                    + lock.resource() + "')");
            // the initiator logs what onGranted throws at DEBUG only and tries again: a candidate that is never
            // leader would say nothing at the default levels
            if (!mismatchLogged) {
                mismatchLogged = true;
                LOG.log(System.Logger.Level.ERROR, mismatch.getMessage() + "; this candidate is never leader until "
                        + "then (logged once)");
            }
            throw mismatch;
        }
        onGranted(context, token);
    }

    /**
     * The token of a lock on {@code resource} that this thread took and holds, or {@code null}. The initiator obtains
     * its lock once, when it starts: {@link FencedLockRegistry#expireUnusedOlderThan} may have dropped that instance
     * from the registry while the candidate stood by, so {@code obtain} now returns another one, which this thread
     * does not hold although the initiator's lock, and its token, are held here.
     */
    private static FencingToken heldOnThisThread(String resource) {
        TokenUse use = FencingContext.useOf(resource);
        return use != null && use.isOpenOn(Thread.currentThread()) ? FencingContext.currentLocal(resource) : null;
    }

    /**
     * Called on the initiator's thread when this candidate becomes leader, with the token of this leadership (also
     * bound on this thread until leadership ends). Start the leader's work here and bind {@code token} for it; do not
     * block for long, the initiator's heartbeat runs on this thread.
     */
    protected abstract void onGranted(Context context, FencingToken token) throws InterruptedException;
}
