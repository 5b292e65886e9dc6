package dev.fencing.signing;

import dev.fencing.issuer.Lease;
import dev.fencing.token.FencingToken;

/** A lease of the decorated issuer, presenting the signed token; everything else is the decorated lease's. */
final class SignedLease implements Lease {

    private final Lease delegate;
    private final FencingToken token;

    SignedLease(Lease delegate, FencingToken token) {
        this.delegate = delegate;
        this.token = token;
    }

    @Override
    public FencingToken token() {
        return token;
    }

    @Override
    public boolean isLost() {
        return delegate.isLost();
    }

    @Override
    public boolean isReleased() {
        return delegate.isReleased();
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return "SignedLease[" + delegate + "]";
    }
}
