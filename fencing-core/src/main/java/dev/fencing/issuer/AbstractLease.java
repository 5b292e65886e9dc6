package dev.fencing.issuer;

import dev.fencing.token.FencingToken;

import java.util.Objects;

/**
 * The bookkeeping every issuer's lease shares: its token, and whether it was released or reported lost. Each
 * transition happens once, so a loss is counted once and a release is done once. {@link #close()} hands the lease to
 * its {@link AbstractTokenIssuer}, which releases it; the transitions are internal to the issuer, nobody else can
 * mark a lease released or lost.
 */
public abstract class AbstractLease implements Lease {

    private final AbstractTokenIssuer<?> issuer;
    private final FencingToken token;
    /** The token a decorating issuer hands out for this lease (shifted by an offset), when it differs. */
    private volatile FencingToken presented;
    private boolean lost;
    private boolean released;

    /**
     * @param issuer the issuer that granted the lock, and releases it on {@link #close()}
     * @param token  the acquisition's token
     */
    protected AbstractLease(AbstractTokenIssuer<?> issuer, FencingToken token) {
        this.issuer = Objects.requireNonNull(issuer, "issuer");
        this.token = Objects.requireNonNull(token, "token");
    }

    @Override
    public final FencingToken token() {
        return token;
    }

    /** Records the token a decorating issuer hands out for this lease, for the lines that name it. */
    final void presentedAs(FencingToken shown) {
        presented = shown;
    }

    /** The token the lease's holder was handed: {@link #token()}, or what a decorating issuer made of it. */
    final FencingToken presented() {
        FencingToken shown = presented;
        return shown == null ? token : shown;
    }

    /** Whether the lock service reported this lease lost, or its release found the lock taken over. */
    @Override
    public synchronized boolean isLost() {
        return lost;
    }

    @Override
    public final synchronized boolean isReleased() {
        return released;
    }

    /** Releases the lease through its issuer; see {@link Lease#close()}. */
    @Override
    public final void close() {
        issuer.releaseLease(this);
    }

    /**
     * Records a loss the lock service reported while the lease was held; {@code true} only for the first loss of a
     * lease that was not released. Runs {@link #onLost()} on that first loss. Issuers call it through
     * {@link AbstractTokenIssuer#markLost}.
     */
    final boolean markLost() {
        synchronized (this) {
            if (lost || released) {
                return false;
            }
            lost = true;
        }
        onLost();
        return true;
    }

    /** Runs once, right after the lease was first marked lost; for an issuer that frees local state then. */
    protected void onLost() {
    }

    /** Records the release; {@code true} only the first time. */
    final synchronized boolean markReleased() {
        if (released) {
            return false;
        }
        released = true;
        return true;
    }

    /**
     * Records a loss found by the release itself (the lock was no longer this lease's); {@code true} the first time.
     */
    final synchronized boolean markLostAtRelease() {
        if (lost) {
            return false;
        }
        lost = true;
        return true;
    }

    /** Whether the loss flag is set, without the time-based checks an issuer may add to {@link #isLost()}. */
    final synchronized boolean lostFlag() {
        return lost;
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + token + (isLost() ? ", lost" : "")
                + (isReleased() ? ", released" : "") + "]";
    }
}
