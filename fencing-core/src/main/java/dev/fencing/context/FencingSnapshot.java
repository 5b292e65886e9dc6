package dev.fencing.context;

import dev.fencing.token.FencingToken;

import java.util.AbstractCollection;
import java.util.AbstractMap;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The tokens visible on a thread at one moment, one per resource, together with where each was bound from: locally
 * (acquired, or bound by application code) or from a remote carrier such as an HTTP header
 * ({@link FencingContext#bindRemote}). Immutable; read it as an unmodifiable map from resource to token, and bind it
 * on another thread with {@link FencingContext#bindOnly(FencingSnapshot)} (or {@code bindOnly(snapshot.values())}),
 * which keeps each token's origin, so a header token stays good for checks only wherever it travels.
 */
public final class FencingSnapshot extends AbstractMap<String, FencingToken> {

    static final FencingSnapshot EMPTY = new FencingSnapshot(new LinkedHashMap<>(), Set.of());

    private final Map<String, FencingToken> tokens;
    private final Set<String> remote;
    private final Values values = new Values();

    FencingSnapshot(LinkedHashMap<String, FencingToken> tokens, Set<String> remote) {
        this.tokens = Collections.unmodifiableMap(tokens);
        this.remote = Set.copyOf(remote);
    }

    /** A snapshot with no tokens. */
    public static FencingSnapshot empty() {
        return EMPTY;
    }

    /**
     * A snapshot of exactly {@code tokens}, each bound locally (a lock this process holds, or bound by application
     * code): what a reactive chain's context holds after {@code contextWrite} of an acquired token.
     *
     * @throws IllegalArgumentException when two tokens name the same resource
     */
    public static FencingSnapshot local(Collection<FencingToken> tokens) {
        return of(tokens, false);
    }

    /**
     * A snapshot of exactly {@code tokens}, each received from a remote carrier (a request or message header): good
     * for checks, never a lock this process holds (see {@link FencingContext#bindRemote}).
     *
     * @throws IllegalArgumentException when two tokens name the same resource
     */
    public static FencingSnapshot remote(Collection<FencingToken> tokens) {
        return of(tokens, true);
    }

    private static FencingSnapshot of(Collection<FencingToken> tokens, boolean remote) {
        LinkedHashMap<String, FencingToken> map = new LinkedHashMap<>();
        Set<String> remoteResources = new HashSet<>();
        int i = 0;
        for (FencingToken token : tokens) {
            Objects.requireNonNull(token, "tokens[" + i++ + "]");
            FencingToken previous = map.putIfAbsent(token.resource(), token);
            if (previous != null) {
                throw new IllegalArgumentException("Two tokens for resource '" + token.resource() + "': " + previous
                        + " and " + token);
            }
            if (remote) {
                remoteResources.add(token.resource());
            }
        }
        return map.isEmpty() ? EMPTY : new FencingSnapshot(map, remoteResources);
    }

    /**
     * This snapshot with {@code tokens} bound locally on top of it: a token for a resource this snapshot already has
     * hides that one (an inner binding wins), the others stay with their origins.
     *
     * @throws IllegalArgumentException when two of {@code tokens} name the same resource
     */
    public FencingSnapshot withLocal(FencingToken... tokens) {
        FencingSnapshot inner = local(Arrays.asList(tokens));
        LinkedHashMap<String, FencingToken> map = new LinkedHashMap<>(inner.tokens);
        Set<String> remoteResources = new HashSet<>();
        for (Map.Entry<String, FencingToken> outer : this.tokens.entrySet()) {
            if (map.putIfAbsent(outer.getKey(), outer.getValue()) == null && remote.contains(outer.getKey())) {
                remoteResources.add(outer.getKey());
            }
        }
        return new FencingSnapshot(map, remoteResources);
    }

    /** Whether the token for {@code resource} in this snapshot was bound from a remote carrier. */
    public boolean isRemote(String resource) {
        return remote.contains(resource);
    }

    @Override
    public Set<Entry<String, FencingToken>> entrySet() {
        return tokens.entrySet();
    }

    @Override
    public FencingToken get(Object resource) {
        return tokens.get(resource);
    }

    @Override
    public boolean containsKey(Object resource) {
        return tokens.containsKey(resource);
    }

    @Override
    public int size() {
        return tokens.size();
    }

    /** The tokens; passed to {@link FencingContext#bindOnly(java.util.Collection)} they keep their origins. */
    @Override
    public Collection<FencingToken> values() {
        return values;
    }

    FencingToken[] tokenArray() {
        return tokens.values().toArray(FencingToken[]::new);
    }

    boolean[] remoteArray() {
        boolean[] flags = new boolean[tokens.size()];
        int i = 0;
        for (String resource : tokens.keySet()) {
            flags[i++] = remote.contains(resource);
        }
        return flags;
    }

    /** The values view, which remembers the snapshot it came from. */
    final class Values extends AbstractCollection<FencingToken> {
        @Override
        public Iterator<FencingToken> iterator() {
            return tokens.values().iterator();
        }

        @Override
        public int size() {
            return tokens.size();
        }

        FencingSnapshot snapshot() {
            return FencingSnapshot.this;
        }
    }
}
