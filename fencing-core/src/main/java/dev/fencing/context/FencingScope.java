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
    /**
     * The last keyed lookup ({@link #indexOf(String, Object)}): its resource, its key (a text key as itself, a number
     * as its value, so remembering it stores no reference) and what it found.
     */
    private String lookedUpResource;
    private String lookedUpText;
    private long lookedUpNumber;
    private boolean lookedUpNumeric;
    private int lookedUpIndex;
    /**
     * Per token, the number its resource ends with and where that number starts ({@link KeyedResources#numberAt}),
     * read on the first lookup of a number key; {@code null} until then.
     */
    private long[] numbers;
    private int[] numbersAt;

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
     * The index of the token for {@code resource:key} in this scope, or -1 ({@link KeyedResources}). The
     * last keyed lookup is remembered: asked again for the same resource instance (a fence point's, interned) and an
     * equal key, as a fenced method called again for the same entity in one scope asks, the scope answers without
     * matching text. The memory is this scope's, and a scope is read on its own thread only.
     */
    int indexOf(String resource, Object key) {
        boolean numeric = !(key instanceof String);
        long number = numeric ? ((Number) key).longValue() : 0;
        if (lookedUpResource == resource
                && (numeric ? lookedUpNumeric && lookedUpNumber == number : key.equals(lookedUpText))) {
            return lookedUpIndex;
        }
        int found = numeric ? indexOfNumber(resource, number) : indexOfText(resource, (String) key);
        // a number is remembered by value: Long 7 and Integer 7 are one text, and no box is kept alive
        if (lookedUpResource != resource) {
            lookedUpResource = resource;
        }
        if (numeric) {
            lookedUpText = null;
            lookedUpNumber = number;
        } else {
            lookedUpText = (String) key;
        }
        lookedUpNumeric = numeric;
        lookedUpIndex = found;
        return found;
    }

    /** The index of the token for {@code resource + ':' + key} found by matching text, or -1. */
    private int indexOfText(String resource, String key) {
        for (int i = 0; i < tokens.length; i++) {
            if (KeyedResources.matches(tokens[i].resource(), resource, key)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The index of the token for {@code resource + ':' + number}, or -1: its number and where its key starts are
     * read once per scope ({@link KeyedResources#numberAt}), so each token costs two comparisons, not a digit loop.
     */
    private int indexOfNumber(String resource, long number) {
        long[] n = numbers;
        int[] at = numbersAt;
        if (at == null) {
            n = new long[tokens.length];
            at = new int[tokens.length];
            for (int i = 0; i < tokens.length; i++) {
                at[i] = KeyedResources.numberAt(tokens[i].resource(), n, i);
            }
            numbers = n;
            numbersAt = at;
        }
        int keyAt = resource.length() + 1;
        for (int i = 0; i < at.length; i++) {
            if (n[i] == number && at[i] == keyAt && tokens[i].resource().startsWith(resource)) {
                return i;
            }
        }
        return -1;
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
