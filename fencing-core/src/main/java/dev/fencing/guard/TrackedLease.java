package dev.fencing.guard;

import dev.fencing.context.TokenUse;
import dev.fencing.issuer.Lease;
import dev.fencing.token.FencingToken;

/**
 * The lease of one acquiring call, with the {@link TokenUse} its binding carries: when it is released after the call
 * returned and nothing used the token, the call is {@linkplain UncheckedLeases#report reported}. A lease scope that
 * holds it until a transaction ends hands this object to later acquiring calls, which share its use.
 */
final class TrackedLease implements Lease {

    private final Lease lease;
    private final FencingToken token;
    final TokenUse use;

    TrackedLease(Lease lease, FencingToken token) {
        this.lease = lease;
        this.token = token;
        // a check presenting the token once the lease is known lost, or given back (work the acquiring call handed
        // to a thread it did not wait for, which writes after it returned), is refused before the store (fail closed);
        // so is one once a lock this one was taken inside (an enclosing acquiring call's) is known lost or given back
        this.use = TokenUse.openNested(token, () -> lease.isLost() || lease.isReleased());
    }

    /** An acquiring call of {@code point} under this lease returned normally. */
    void returned(FencePoint point) {
        use.ranUnder(point);
    }

    @Override
    public FencingToken token() {
        return token;
    }

    @Override
    public boolean isLost() {
        return lease.isLost();
    }

    @Override
    public boolean isReleased() {
        return lease.isReleased();
    }

    @Override
    public void close() {
        boolean first = !lease.isReleased();
        try {
            lease.close();
        } finally {
            use.close();
            if (first && !use.isUsed()) {
                UncheckedLeases.reportCallers(use, token);
            }
        }
    }

    @Override
    public String toString() {
        return lease.toString();
    }
}
