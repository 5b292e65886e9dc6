package dev.fencing.context;

import dev.fencing.token.FencingToken;

import java.util.AbstractCollection;
import java.util.AbstractMap;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
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

    static final FencingSnapshot EMPTY = new FencingSnapshot(new LinkedHashMap<>(), Set.of(), Map.of());

    private final Map<String, FencingToken> tokens;
    private final Set<String> remote;
    /** The {@link TokenUse} of each token of an acquired lock, by resource. */
    private final Map<String, TokenUse> uses;
    private final Values values = new Values();

    FencingSnapshot(LinkedHashMap<String, FencingToken> tokens, Set<String> remote, Map<String, TokenUse> uses) {
        this.tokens = Collections.unmodifiableMap(tokens);
        this.remote = Set.copyOf(remote);
        this.uses = Map.copyOf(uses);
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

    /**
     * {@link #remote(Collection)} with a {@link TokenUse} for each token, in order, marked when a check presents it
     * or a carrier sends it on (see {@link FencingContext#bindRemote(List, List)}).
     *
     * @throws IllegalArgumentException when two tokens name the same resource, or the lists differ in size
     */
    public static FencingSnapshot remote(List<FencingToken> tokens, List<TokenUse> uses) {
        if (tokens.size() != uses.size()) {
            throw new IllegalArgumentException(tokens.size() + " tokens and " + uses.size()
                    + " uses: one use per token");
        }
        FencingSnapshot plain = of(tokens, true);
        if (plain == EMPTY) {
            return EMPTY;
        }
        Map<String, TokenUse> byResource = new HashMap<>();
        for (int i = 0; i < tokens.size(); i++) {
            byResource.put(tokens.get(i).resource(), Objects.requireNonNull(uses.get(i), "uses[" + i + "]"));
        }
        return new FencingSnapshot(new LinkedHashMap<>(plain.tokens), plain.remote, byResource);
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
        return map.isEmpty() ? EMPTY : new FencingSnapshot(map, remoteResources, Map.of());
    }

    /**
     * This snapshot with {@code tokens} bound locally on top of it: a token for a resource this snapshot already has
     * hides that one (an inner binding wins), the others stay with their origins. A token of a lock this process holds
     * ({@link TokenUse#open}) keeps its use, as with {@link FencingContext#bind}.
     *
     * @throws IllegalArgumentException when two of {@code tokens} name the same resource
     */
    public FencingSnapshot withLocal(FencingToken... tokens) {
        Map<String, TokenUse> uses = new HashMap<>();
        for (FencingToken token : tokens) {
            TokenUse use = token == null ? null : TokenUse.of(token); // a held lock's token bound by hand keeps its use
            if (use != null) {
                uses.put(token.resource(), use);
            }
        }
        return with(local(Arrays.asList(tokens)), uses);
    }

    /**
     * This snapshot with the token of a lock this process acquired bound locally on top of it, with the
     * {@link TokenUse} that records whether a check presented it: what a reactive acquiring call writes into its
     * context (see {@link FencingContext#bindAcquired}).
     */
    public FencingSnapshot withAcquired(FencingToken token, TokenUse use) {
        Objects.requireNonNull(use, "use");
        return with(local(List.of(token)), Map.of(token.resource(), use));
    }

    private FencingSnapshot with(FencingSnapshot inner, Map<String, TokenUse> innerUses) {
        LinkedHashMap<String, FencingToken> map = new LinkedHashMap<>(inner.tokens);
        Set<String> remoteResources = new HashSet<>();
        Map<String, TokenUse> allUses = new HashMap<>(innerUses);
        for (Map.Entry<String, FencingToken> outer : this.tokens.entrySet()) {
            String resource = outer.getKey();
            if (map.putIfAbsent(resource, outer.getValue()) == null) {
                if (remote.contains(resource)) {
                    remoteResources.add(resource);
                }
                TokenUse use = uses.get(resource);
                if (use != null) {
                    allUses.put(resource, use);
                }
            }
        }
        return new FencingSnapshot(map, remoteResources, allUses);
    }

    /**
     * The token for {@code resource}, or {@code null}, as a check presents it: when it is the token of an acquired
     * lock, that lock's {@link TokenUse} is marked (as {@link FencingContext#present} does). {@link #get} reads
     * without marking.
     *
     * @throws dev.fencing.rule.StaleTokenException when that lock is known lost ({@code lockLost()})
     */
    public FencingToken present(String resource) {
        FencingToken token = tokens.get(resource);
        if (token != null) {
            TokenUse use = uses.get(resource);
            if (use != null) {
                use.presentedFor(token);
            }
        }
        return token;
    }

    /**
     * The {@link TokenUse} of the acquired lock whose token this snapshot holds for {@code resource}, or {@code null}
     * when that token was not bound by an acquiring call: for an adapter that binds the token again elsewhere and
     * must keep its use ({@link #withAcquired}).
     */
    public TokenUse useOf(String resource) {
        return uses.get(resource);
    }

    /**
     * Records that {@code sent}, tokens of this snapshot, were sent to another process (a request or message
     * header), whose fenced checks present them there: the acquired locks they belong to count as used. What the
     * library's carriers call; a carrier of your own calls it too. Tokens this snapshot does not hold are ignored.
     */
    public void markSent(Collection<FencingToken> sent) {
        if (uses.isEmpty()) {
            return;
        }
        for (FencingToken token : sent) {
            TokenUse use = uses.get(token.resource());
            if (use != null && token.equals(tokens.get(token.resource()))) {
                use.markUsed();
            }
        }
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

    /** Per token, in {@link #tokenArray()}'s order, its acquired lock's use; {@code null} when none has one. */
    TokenUse[] useArray() {
        if (uses.isEmpty()) {
            return null;
        }
        TokenUse[] array = new TokenUse[tokens.size()];
        int i = 0;
        for (String resource : tokens.keySet()) {
            array[i++] = uses.get(resource);
        }
        return array;
    }

    boolean[] remoteArray() {
        if (remote.isEmpty()) {
            return FencingContext.local(tokens.size());
        }
        if (remote.size() == tokens.size() && remote.containsAll(tokens.keySet())) {
            return FencingContext.remote(tokens.size());
        }
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
