package dev.fencing.issuer;

import dev.fencing.token.FencingToken;

/** A lease presenting another token than its own ({@link Lease#presenting}); everything else is the lease's. */
final class PresentedLease implements Lease {

    private final Lease delegate;
    private final FencingToken token;

    PresentedLease(Lease delegate, FencingToken token) {
        this.delegate = delegate;
        this.token = token;
        Lease inner = delegate;
        while (inner instanceof PresentedLease presented) {
            inner = presented.delegate;
        }
        if (inner instanceof AbstractLease granted && token != null) {
            granted.presentedAs(token); // its lost-lock line names the token its holder presents
        }
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
        return delegate + " presenting " + (token == null ? "no token" : "token " + token.value());
    }
}
