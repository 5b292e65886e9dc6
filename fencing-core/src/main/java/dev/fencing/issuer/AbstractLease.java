package dev.fencing.issuer;

import dev.fencing.token.FencingToken;

import java.util.Objects;

/**
 * The bookkeeping every issuer's lease shares: its token, and whether it was released or reported lost. Each
 * transition happens once ({@link #markLost()} and {@link #markReleased()} say whether this call made it), so a loss
 * is counted once and a release is done once.
 */
public abstract class AbstractLease implements Lease {

    private final FencingToken token;
    private boolean lost;
    private boolean released;

    protected AbstractLease(FencingToken token) {
        this.token = Objects.requireNonNull(token, "token");
    }

    @Override
    public FencingToken token() {
        return token;
    }

    /** Released, or reported lost by the lock service. */
    @Override
    public synchronized boolean isLost() {
        return lost || released;
    }

    /** Whether the lock service reported this lease lost (release alone does not count). */
    public synchronized boolean wasLost() {
        return lost;
    }

    /** Records a loss; {@code true} only for the first loss of a lease that was not released. */
    public synchronized boolean markLost() {
        if (lost || released) {
            return false;
        }
        lost = true;
        return true;
    }

    /** Records the release; {@code true} only the first time. */
    public synchronized boolean markReleased() {
        if (released) {
            return false;
        }
        released = true;
        return true;
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + token + (isLost() ? ", lost" : "") + "]";
    }
}
