package dev.fencing.context;

import dev.fencing.token.FencingToken;

/**
 * Tokens bound to the current thread by {@link FencingContext#bind}, until {@link #close()}. Scopes nest: an inner
 * binding for the same resource hides the outer one and closing it brings the outer one back. Close on the thread
 * that opened it, innermost first (try-with-resources does both); closing twice does nothing.
 */
public final class FencingScope implements AutoCloseable {

    final FencingToken[] tokens;
    /** Per token: bound from a remote carrier (an HTTP header, ...): good for checks, never for skipping a lock. */
    final boolean[] remote;
    /** Per token: the use of the acquired lock it belongs to, marked when a check reads it; {@code null}: none. */
    final TokenUse[] uses;
    final FencingScope parent;
    final Thread owner;
    /** Hides every binding below it: the thread sees exactly this scope's tokens (a propagated context). */
    final boolean isolating;
    boolean closed;
    /** The last keyed lookup ({@link #indexOf(String, Object)}): its resource, its key and what it found. */
    private String lookedUpResource;
    private Object lookedUpKey;
    private int lookedUpIndex;

    FencingScope(FencingToken[] tokens, boolean[] remote, TokenUse[] uses, FencingScope parent, Thread owner,
                 boolean isolating) {
        this.tokens = tokens;
        this.remote = remote;
        this.uses = uses;
        this.parent = parent;
        this.owner = owner;
        this.isolating = isolating;
    }

    /**
     * The index of {@code resource}'s token in this scope, or -1. The same instance matches at once (a fence point's
     * resource is interned, as are the literals tokens are made with); another resource is told apart by its cached
     * hash, so its text is compared only when the hashes are equal.
     */
    int indexOf(String resource) {
        if (resource == null) {
            return -1; // no token is bound for no resource
        }
        int hash = resource.hashCode();
        for (int i = 0; i < tokens.length; i++) {
            String bound = tokens[i].resource();
            if (bound == resource || bound.hashCode() == hash && bound.equals(resource)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The index of the token for {@code resource:key} in this scope, or -1 ({@link KeyedResources#matches}). The
     * last keyed lookup is remembered: asked again for the same resource instance (a fence point's, interned) and an
     * equal key, as a fenced method called again for the same entity in one scope asks, the scope answers without
     * matching text. The memory is this scope's, and a scope is read on its own thread only.
     */
    int indexOf(String resource, Object key) {
        if (lookedUpResource == resource && key.equals(lookedUpKey)) {
            return lookedUpIndex;
        }
        int length = KeyedResources.lengthOf(resource, key);
        int found = -1;
        for (int i = 0; i < tokens.length; i++) {
            if (KeyedResources.matches(tokens[i].resource(), resource, key, length)) {
                found = i;
                break;
            }
        }
        lookedUpResource = resource;
        lookedUpKey = key;
        lookedUpIndex = found;
        return found;
    }

    /** The token at {@code i}, as a check presents it: its lock's use, if it has one, is marked. */
    FencingToken present(int i) {
        TokenUse[] u = uses;
        if (u != null && u[i] != null) {
            u[i].markUsed();
        }
        return tokens[i];
    }

    /**
     * Unbinds this scope's tokens, restoring what was bound before it.
     *
     * @throws IllegalStateException when called from another thread, or when inner scopes were left open (they
     *                               are closed too, so nothing leaks, and the error says so)
     */
    @Override
    public void close() {
        FencingContext.close(this);
    }
}
