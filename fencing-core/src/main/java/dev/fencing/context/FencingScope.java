package dev.fencing.context;

import dev.fencing.token.FencingToken;

/**
 * Tokens bound to the current thread by {@link FencingContext#bind}, until {@link #close()}. Scopes nest: an inner
 * binding for the same resource hides the outer one and closing it brings the outer one back. Close on the thread
 * that opened it, innermost first (try-with-resources does both); closing twice does nothing.
 */
public final class FencingScope implements AutoCloseable {

    final FencingToken[] tokens;
    /**
     * Per token: bound from a remote carrier (an HTTP header, ...): good for checks, never for skipping a lock. Often
     * an array shared by many scopes ({@link FencingContext#local}, {@link FencingContext#remote}): read only.
     */
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
    /**
     * Per bound token {@code i}, where its resource's key starts when that key is a number ({@code [2i]}, -1 when it
     * is not) and that number ({@code [2i + 1]}), read by {@link KeyedResources#numberAt} on the first lookup of a
     * number key that misses the memory and is not the scope's first keyed lookup; number keys are compared as
     * numbers from then on. {@code null} until then.
     */
    private long[] numbers;
    /** Per bound token, the resource instance its resource was last found to start with ({@link #hasPrefix}). */
    private String[] prefixes;

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
        FencingToken[] bound = tokens;
        for (int i = 0; i < bound.length; i++) {
            if (bound[i].resource() == resource) {
                return i;
            }
        }
        return indexOfEqual(resource);
    }

    /** {@link #indexOf(String)} for a resource no bound token carries the same instance of: by hash, then text. */
    private int indexOfEqual(String resource) {
        int hash = resource.hashCode();
        for (int i = 0; i < tokens.length; i++) {
            String bound = tokens[i].resource();
            if (bound.hashCode() == hash && bound.equals(resource)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The index of the token for {@code resource:key} in this scope, or -1 ({@link KeyedResources#matches},
     * {@link KeyedResources#matchesNumber}). The last keyed lookup is remembered: asked again for the same resource
     * instance (a fence point's, interned) and an equal key, as a fenced method called again for the same entity in
     * one scope asks, the scope answers without matching text. A scope's first keyed lookup matches text and
     * allocates nothing, as a request that binds a token and fences one entity asks. A later number key that misses
     * the memory (another entity, most often) makes the scope read the numbers of its tokens once and compare numbers
     * from then on ({@link #indexOfNumber}); text keys always match text. The memory is this scope's, and a scope is
     * read on its own thread only.
     */
    int indexOf(String resource, Object key) {
        if (lookedUpResource == resource && key.equals(lookedUpKey)) {
            return lookedUpIndex;
        }
        int found = key instanceof String || numbers == null && lookedUpResource == null
                ? indexOfText(resource, key)
                : indexOfNumber(resource, ((Number) key).longValue());
        lookedUpResource = resource;
        lookedUpKey = key;
        lookedUpIndex = found;
        return found;
    }

    /** The index of the token for {@code resource:key} found by matching text, or -1. */
    private int indexOfText(String resource, Object key) {
        if (key instanceof String text) {
            int length = resource.length() + 1 + text.length();
            for (int i = 0; i < tokens.length; i++) {
                if (KeyedResources.matches(tokens[i].resource(), resource, text, length)) {
                    return i;
                }
            }
            return -1;
        }
        long number = ((Number) key).longValue();
        for (int i = 0; i < tokens.length; i++) {
            if (KeyedResources.matchesNumber(tokens[i].resource(), resource, number)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The index of the token for {@code resource + ':' + number}, or -1, found by comparing numbers: each bound
     * resource's number is read once ({@link #numbers}, a digit loop per token then), so afterwards a token costs two
     * comparisons, and the one candidate its resource part ({@link #hasPrefix}).
     */
    private int indexOfNumber(String resource, long number) {
        long[] n = numbers;
        if (n == null) {
            n = new long[2 * tokens.length];
            prefixes = new String[tokens.length];
            for (int i = 0; i < tokens.length; i++) {
                n[2 * i] = KeyedResources.numberAt(tokens[i].resource(), n, 2 * i + 1);
            }
            numbers = n;
        }
        long keyAt = resource.length() + 1;
        for (int i = 0; i < tokens.length; i++) {
            if (n[2 * i + 1] == number && n[2 * i] == keyAt && hasPrefix(i, resource)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Whether token {@code i}'s resource starts with {@code resource}. The last instance found to be its prefix is
     * remembered for the token, so a fence point's resource (interned) asked again is one reference comparison; only
     * an instance that passed {@code startsWith} is ever remembered.
     */
    private boolean hasPrefix(int i, String resource) {
        String[] known = prefixes;
        if (known[i] == resource) {
            return true;
        }
        if (tokens[i].resource().startsWith(resource)) {
            known[i] = resource;
            return true;
        }
        return false;
    }

    /**
     * The token at {@code i}, as a check presents it: its lock's use, if it has one, is marked.
     *
     * @throws dev.fencing.rule.StaleTokenException when that lock is known lost ({@code lockLost()})
     */
    FencingToken present(int i) {
        TokenUse[] u = uses;
        if (u != null && u[i] != null) {
            u[i].presentedFor(tokens[i]);
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
