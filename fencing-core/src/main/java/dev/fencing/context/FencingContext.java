package dev.fencing.context;

import dev.fencing.token.FencingToken;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * The tokens bound to the current thread, per resource: what {@code @Fenced} methods check and what the client
 * side carries. Bindings are scoped ({@link #bind}, {@link #run}, {@link #call}) and nest; after the outermost scope
 * closes nothing remains on the thread (the thread-local is removed), also when the scope ends by an exception.
 * A thread that never had a binding sees none: tokens cross threads only when propagated, by
 * {@link FencingPropagation} or by Micrometer's context-propagation (through {@link FencingThreadLocalAccessor}).
 *
 * <p>Each binding remembers its origin. Tokens bound with {@link #bindRemote} came from a remote carrier (the
 * {@code Fencing-Token} header of an incoming request): they are checked like any other token ({@link #current}),
 * but they are not a lock this process holds, so {@link #currentLocal} ignores them and an acquiring
 * {@code @Fenced(acquire = true)} method takes its own lock instead of running under them. The origin travels with
 * the token through {@link #snapshot()}, {@link #bindOnly(FencingSnapshot)}, {@link FencingPropagation} and
 * Micrometer's context-propagation.
 */
public final class FencingContext {

    private static final ThreadLocal<FencingScope> TOP = new ThreadLocal<>();

    /**
     * The origin flags ({@link FencingScope#remote}) of scopes of up to eight tokens, all local ({@code [n]}) or all
     * remote: shared by every such scope, since a scope only reads them, so a bind allocates none.
     */
    private static final boolean[][] LOCAL = new boolean[9][];
    private static final boolean[][] REMOTE = new boolean[9][];

    static {
        for (int n = 0; n < LOCAL.length; n++) {
            LOCAL[n] = new boolean[n];
            REMOTE[n] = new boolean[n];
            Arrays.fill(REMOTE[n], true);
        }
    }

    private FencingContext() {
    }

    /** Binds {@code token} for its resource until the returned scope is closed. */
    public static FencingScope bind(FencingToken token) {
        Objects.requireNonNull(token, "token");
        FencingToken[] tokens = {token};
        return push(tokens, local(1), usesOf(tokens));
    }

    /** Origin flags for {@code n} tokens bound locally; never to be written (shared). */
    static boolean[] local(int n) {
        return n < LOCAL.length ? LOCAL[n] : new boolean[n];
    }

    /** Origin flags for {@code n} tokens bound from a remote carrier; never to be written (shared). */
    static boolean[] remote(int n) {
        if (n < REMOTE.length) {
            return REMOTE[n];
        }
        boolean[] flags = new boolean[n];
        Arrays.fill(flags, true);
        return flags;
    }

    /** The open {@link TokenUse} of each token (a lock this process holds, handed over by hand), or {@code null}. */
    private static TokenUse[] usesOf(FencingToken[] tokens) {
        TokenUse[] uses = null;
        for (int i = 0; i < tokens.length; i++) {
            TokenUse use = TokenUse.of(tokens[i]);
            if (use != null) {
                if (uses == null) {
                    uses = new TokenUse[tokens.length];
                }
                uses[i] = use;
            }
        }
        return uses;
    }

    /**
     * Binds the token of a lock this process acquired for the duration of one call, with the {@link TokenUse} that
     * records whether a check presented it (or a carrier sent it) while the lock was held: what an acquiring
     * {@code @Fenced} method binds. The use travels with the token wherever the binding is propagated.
     */
    public static FencingScope bindAcquired(FencingToken token, TokenUse use) {
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(use, "use");
        return push(new FencingToken[] {token}, local(1), new TokenUse[] {use});
    }

    /**
     * Binds the tokens of several locks this process acquired, one per resource, each with its {@link TokenUse}:
     * {@link #bindAcquired(FencingToken, TokenUse)} for an operation that took several locks at once.
     *
     * @throws IllegalArgumentException when two tokens name the same resource, or the lists differ in size (nothing
     *                                  is bound)
     */
    public static FencingScope bindAcquired(List<FencingToken> tokens, List<TokenUse> uses) {
        FencingToken[] copy = tokens.toArray(FencingToken[]::new);
        TokenUse[] useCopy = usesFor(copy, uses);
        return push(copy, local(copy.length), useCopy);
    }

    /**
     * {@code uses} as an array matching {@code tokens}, which are checked to name distinct resources.
     *
     * @throws IllegalArgumentException when two tokens name the same resource, or the two differ in size
     * @throws NullPointerException     when a use is {@code null}
     */
    private static TokenUse[] usesFor(FencingToken[] tokens, List<TokenUse> uses) {
        TokenUse[] useCopy = uses.toArray(TokenUse[]::new);
        if (tokens.length != useCopy.length) {
            throw new IllegalArgumentException(tokens.length + " tokens and " + useCopy.length + " uses: one use per "
                    + "token");
        }
        checkDistinct(tokens);
        for (int i = 0; i < useCopy.length; i++) {
            Objects.requireNonNull(useCopy[i], "uses[" + i + "]");
        }
        return useCopy;
    }

    /**
     * Binds several tokens at once, one per resource, for one operation over several resources.
     *
     * @throws IllegalArgumentException when two tokens name the same resource (nothing is bound)
     */
    public static FencingScope bind(FencingToken... tokens) {
        Objects.requireNonNull(tokens, "tokens");
        FencingToken[] copy = tokens.clone();
        checkDistinct(copy);
        return push(copy, local(copy.length), usesOf(copy));
    }

    private static void checkDistinct(FencingToken[] copy) {
        for (int i = 0; i < copy.length; i++) {
            Objects.requireNonNull(copy[i], "tokens[" + i + "]");
            for (int j = 0; j < i; j++) {
                if (copy[j].resource().equals(copy[i].resource())) {
                    throw new IllegalArgumentException("Two tokens for resource '" + copy[i].resource()
                            + "' in one bind: " + copy[j] + " and " + copy[i]);
                }
            }
        }
    }

    /** Same as {@link #bind(FencingToken...)}. */
    public static FencingScope bind(Collection<FencingToken> tokens) {
        return bind(tokens.toArray(FencingToken[]::new));
    }

    /** Runs {@code action} with {@code token} bound, unbinding it afterwards whatever happens. */
    public static void run(FencingToken token, Runnable action) {
        try (FencingScope ignored = bind(token)) {
            action.run();
        }
    }

    /** Calls {@code action} with {@code token} bound, unbinding it afterwards whatever happens. */
    public static <T> T call(FencingToken token, Callable<T> action) throws Exception {
        try (FencingScope ignored = bind(token)) {
            return action.call();
        }
    }

    /**
     * The token bound for {@code resource} on this thread (innermost scope first), or {@code null}. Whatever its
     * origin: this is the token a fenced write presents to its store. A read only: to present it to a check of your
     * own, use {@link #present(String)}.
     */
    public static FencingToken current(String resource) {
        return find(resource, false);
    }

    /**
     * The token {@link #current(String)} returns, as a check presents it: when it is the token of an acquired lock
     * ({@link #bindAcquired}), that lock's {@link TokenUse} is marked, so the acquiring call is not reported as
     * unchecked. What every {@code @Fenced} check reads; a check of your own (a statement that compares the token
     * itself) reads the token with this.
     */
    public static FencingToken present(String resource) {
        return find(resource, true);
    }

    private static FencingToken find(String resource, boolean present) {
        for (FencingScope scope = TOP.get(); scope != null; scope = scope.parent) {
            int i = scope.indexOf(resource);
            if (i >= 0) {
                return present ? scope.present(i) : scope.tokens[i];
            }
            if (scope.isolating) {
                return null;
            }
        }
        return null;
    }

    /**
     * The token {@link #current(String)} returns for the keyed resource {@code resource:key}, found without building
     * that text: what a keyed fence looks up on every call.
     *
     * @param key a {@link String}, or a {@link Long} or {@link Integer} standing for its decimal text
     * @throws IllegalArgumentException when {@code key} is of another type (nothing is looked up)
     */
    public static FencingToken current(String resource, Object key) {
        return find(resource, key, false);
    }

    /**
     * {@link #current(String, Object)} as a check presents the token (see {@link #present(String)}).
     *
     * @throws IllegalArgumentException when {@code key} is not a {@link String}, {@link Long} or {@link Integer}
     */
    public static FencingToken present(String resource, Object key) {
        return find(resource, key, true);
    }

    private static FencingToken find(String resource, Object key, boolean present) {
        Objects.requireNonNull(resource, "resource");
        if (!(key instanceof String || key instanceof Long || key instanceof Integer)) {
            throw new IllegalArgumentException("The key of resource '" + resource + "' must be a String, Long or "
                    + "Integer, not " + (key == null ? "null" : key.getClass().getName() + ": pass the text a keyed "
                    + "@Fenced method uses for it, as a String (its fencingKey() for a FencingKey; a BigDecimal "
                    + "without trailing zeros, in plain digits; a zoned or offset date-time's instant; else its "
                    + "toString())"));
        }
        for (FencingScope scope = TOP.get(); scope != null; scope = scope.parent) {
            int i = scope.indexOf(resource, key);
            if (i >= 0) {
                return present ? scope.present(i) : scope.tokens[i];
            }
            if (scope.isolating) {
                return null;
            }
        }
        return null;
    }

    /**
     * The {@link TokenUse} of the lock whose token {@link #current(String)} returns for {@code resource}, or
     * {@code null} when none is bound or its binding carries none (a remote token, one bound by hand with no open
     * lock). Marks nothing.
     */
    public static TokenUse useOf(String resource) {
        for (FencingScope scope = TOP.get(); scope != null; scope = scope.parent) {
            int i = scope.indexOf(resource);
            if (i >= 0) {
                return scope.uses == null ? null : scope.uses[i];
            }
            if (scope.isolating) {
                return null;
            }
        }
        return null;
    }

    /**
     * The token of a lock this process acquired that is known lost or given back now, whose binding is visible on
     * this thread (innermost first), or of a lock such a one was taken inside ({@link TokenUse#openNested}), or
     * {@code null}: what an acquiring call asks before it takes its own lock, since work nested in a lost lock must not
     * go on. Only bindings that carry a {@link TokenUse} told how to know the loss count (an acquiring call's, or a
     * token of such a lock bound by hand or propagated); a token the application bound that is no lock of this
     * process, or a remote one, never does. Marks nothing; walks the bindings: for acquiring paths, not checks.
     */
    public static FencingToken lostEnclosingLock() {
        for (FencingScope scope = TOP.get(); scope != null; scope = scope.parent) {
            TokenUse[] uses = scope.uses;
            if (uses != null) {
                for (int i = 0; i < uses.length; i++) {
                    TokenUse use = uses[i];
                    if (use == null) {
                        continue;
                    }
                    if (use.lostNow()) {
                        return scope.tokens[i];
                    }
                    FencingToken around = use.lostAround();
                    if (around != null) {
                        return around;
                    }
                }
            }
            if (scope.isolating) {
                return null;
            }
        }
        return null;
    }

    /**
     * Adds the tokens and uses of the acquired locks visible on this thread (a use that knows its loss), innermost
     * first, each once, with the locks each was taken inside: what {@link TokenUse#openNested} nests a new lock in.
     */
    static void acquiredInView(List<FencingToken> tokens, List<TokenUse> uses) {
        for (FencingScope scope = TOP.get(); scope != null; scope = scope.parent) {
            if (scope.uses != null) {
                for (int i = 0; i < scope.uses.length; i++) {
                    TokenUse use = scope.uses[i];
                    if (use != null && use.knowsLoss()) {
                        use.addWithEnclosing(scope.tokens[i], tokens, uses);
                    }
                }
            }
            if (scope.isolating) {
                return;
            }
        }
    }

    /**
     * The token {@link #current} returns for {@code resource} when it was bound locally (acquired by this process
     * or bound by application code), or {@code null} when none is bound or the visible one came from a remote
     * carrier ({@link #bindRemote}). An acquiring method propagates only a local token: a token that arrived in a
     * request header is not a lock this process holds.
     */
    public static FencingToken currentLocal(String resource) {
        for (FencingScope scope = TOP.get(); scope != null; scope = scope.parent) {
            int i = scope.indexOf(resource);
            if (i >= 0) {
                return scope.remote[i] ? null : scope.tokens[i];
            }
            if (scope.isolating) {
                return null;
            }
        }
        return null;
    }

    /**
     * Every token visible on this thread, one per resource (the innermost binding wins), with its origin; an
     * immutable map from resource to token. Bind it elsewhere with {@link #bindOnly(FencingSnapshot)}.
     */
    public static FencingSnapshot snapshot() {
        FencingScope top = TOP.get();
        if (top == null) {
            return FencingSnapshot.EMPTY;
        }
        LinkedHashMap<String, FencingToken> visible = new LinkedHashMap<>();
        Set<String> remote = new HashSet<>();
        Map<String, TokenUse> uses = new HashMap<>();
        for (FencingScope scope = top; scope != null; scope = scope.parent) {
            for (int i = 0; i < scope.tokens.length; i++) {
                FencingToken token = scope.tokens[i];
                if (visible.putIfAbsent(token.resource(), token) == null) {
                    if (scope.remote[i]) {
                        remote.add(token.resource());
                    }
                    if (scope.uses != null && scope.uses[i] != null) {
                        uses.put(token.resource(), scope.uses[i]);
                    }
                }
            }
            if (scope.isolating) {
                break;
            }
        }
        return new FencingSnapshot(visible, remote, uses);
    }

    /**
     * Binds exactly {@code tokens}: bindings this thread already had are hidden until the scope closes, so a pooled
     * thread never mixes its leftovers with the propagated context. Tokens are bound as local, except when
     * {@code tokens} is the {@link FencingSnapshot#values() values} of a {@link #snapshot()}: then each keeps its
     * origin, as with {@link #bindOnly(FencingSnapshot)}.
     */
    public static FencingScope bindOnly(Collection<FencingToken> tokens) {
        if (tokens instanceof FencingSnapshot.Values values) {
            return bindOnly(values.snapshot());
        }
        FencingToken[] copy = tokens.toArray(FencingToken[]::new);
        checkDistinct(copy);
        return pushIsolating(copy, local(copy.length), usesOf(copy));
    }

    /**
     * Binds exactly the tokens of {@code snapshot} (typically captured on another thread with {@link #snapshot()}),
     * each with the origin it had there; bindings this thread already had are hidden until the scope closes.
     */
    public static FencingScope bindOnly(FencingSnapshot snapshot) {
        Objects.requireNonNull(snapshot, "snapshot");
        return pushIsolating(snapshot.tokenArray(), snapshot.remoteArray(), snapshot.useArray());
    }

    /**
     * Binds exactly {@code tokens}, received from a remote carrier (the {@code Fencing-Token} header of an
     * incoming request), hiding what this thread had bound until the scope closes. They are presented to fenced
     * checks like any token, but an acquiring method does not run under them: it acquires its own lock and binds
     * its own token in an inner scope (see {@link #currentLocal}).
     *
     * @throws IllegalArgumentException when two tokens name the same resource (nothing is bound)
     */
    public static FencingScope bindRemote(Collection<FencingToken> tokens) {
        FencingToken[] copy = tokens.toArray(FencingToken[]::new);
        checkDistinct(copy);
        return pushIsolating(copy, remote(copy.length), null);
    }

    /**
     * {@link #bindRemote(Collection)} with a {@link TokenUse} for each token, in order, marked when a check presents
     * it or a carrier sends it on: what a carrier binds to tell, once the request or message is done, whether the
     * tokens it received were checked ({@link dev.fencing.guard.UncheckedReceipts}).
     *
     * @throws IllegalArgumentException when two tokens name the same resource, or the lists differ in size (nothing
     *                                  is bound)
     */
    public static FencingScope bindRemote(List<FencingToken> tokens, List<TokenUse> uses) {
        FencingToken[] copy = tokens.toArray(FencingToken[]::new);
        TokenUse[] useCopy = usesFor(copy, uses);
        return pushIsolating(copy, remote(copy.length), useCopy.length == 0 ? null : useCopy);
    }

    private static FencingScope pushIsolating(FencingToken[] tokens, boolean[] remote, TokenUse[] uses) {
        FencingScope scope = new FencingScope(tokens, remote, uses, TOP.get(), Thread.currentThread(), true);
        TOP.set(scope);
        return scope;
    }

    /**
     * What is bound on this thread now, for {@link #closeSince(Mark)}: for test frameworks and thread pools that hand a
     * thread back as they found it. Taking a mark binds nothing and changes nothing on the thread.
     */
    public static Mark mark() {
        return new Mark(TOP.get(), Thread.currentThread());
    }

    /**
     * Closes the scopes opened on this thread since {@code mark} and still open (left open by code that did not close
     * what it bound), and returns the tokens they bound, innermost scope first: empty when the thread is as it was.
     * Scopes below the mark are left as they are. When code closed the marked scope itself meanwhile (the thread
     * unwound below the mark), nothing is closed and the answer is empty.
     *
     * @throws IllegalStateException on another thread than the one that took {@code mark}
     */
    public static List<FencingToken> closeSince(Mark mark) {
        Objects.requireNonNull(mark, "mark");
        if (mark.owner != Thread.currentThread()) {
            throw new IllegalStateException("A fencing mark must be used on the thread that took it ("
                    + ThreadNames.of(mark.owner) + "), not on " + ThreadNames.of(Thread.currentThread()));
        }
        List<FencingToken> left = new ArrayList<>();
        FencingScope lowest = null;
        for (FencingScope s = TOP.get(); s != mark.top; s = s.parent) {
            if (s == null) {
                return List.of(); // the marked scope was closed: the thread unwound below the mark
            }
            left.addAll(Arrays.asList(s.tokens));
            lowest = s;
        }
        if (lowest != null) {
            closeQuietly(lowest);
        }
        return List.copyOf(left);
    }

    /**
     * Closes every scope open on this thread and returns the tokens they bound, innermost scope first (empty when
     * nothing was bound): for test frameworks and thread pools that hand a thread on with nothing bound.
     */
    public static List<FencingToken> closeAll() {
        return closeSince(new Mark(null, Thread.currentThread()));
    }

    /** The tokens of the scopes from {@code top} down to {@code below}, excluded, for a message: none is "no token". */
    private static String tokensBetween(FencingScope top, FencingScope below) {
        StringBuilder text = new StringBuilder();
        for (FencingScope s = top; s != below && s != null; s = s.parent) {
            for (FencingToken token : s.tokens) {
                text.append(text.length() == 0 ? "" : ", ").append(token);
            }
        }
        return text.length() == 0 ? "no token" : text.toString();
    }

    /** What a thread had bound when {@link #mark()} was called; used by {@link #closeSince(Mark)} only. */
    public static final class Mark {
        private final FencingScope top;
        private final Thread owner;

        private Mark(FencingScope top, Thread owner) {
            this.top = top;
            this.owner = owner;
        }
    }

    /**
     * Whether no scope is bound on this thread: what a thread pool's thread must be between tasks. A scope that carries
     * no token counts as bound (the empty scope a propagated task without tokens runs in, which hides the thread's own
     * tokens), so to ask whether a token is visible, use {@link #current(String)} or {@code snapshot().isEmpty()}.
     */
    public static boolean isEmpty() {
        return TOP.get() == null;
    }

    private static FencingScope push(FencingToken[] tokens, boolean[] remote, TokenUse[] uses) {
        FencingScope scope = new FencingScope(tokens, remote, uses, TOP.get(), Thread.currentThread(), false);
        TOP.set(scope);
        return scope;
    }

    /** Closes {@code scope} and anything left open inside it, without throwing (for restoring pooled threads). */
    static void closeQuietly(FencingScope scope) {
        try {
            close(scope);
        } catch (IllegalStateException leakedInnerScopes) {
            // already cleaned up by close(); the task that leaked them has finished
        }
    }

    static void close(FencingScope scope) {
        if (scope.owner != Thread.currentThread()) {
            throw new IllegalStateException("A fencing scope must be closed on the thread that opened it ("
                    + ThreadNames.of(scope.owner) + "), not on " + ThreadNames.of(Thread.currentThread()));
        }
        if (scope.closed) {
            return;
        }
        FencingScope top = TOP.get();
        int leaked = 0;
        for (FencingScope s = top; s != scope; s = s.parent) {
            if (s == null) {
                throw new IllegalStateException("Fencing scope is not bound on this thread");
            }
            s.closed = true;
            leaked++;
        }
        scope.closed = true;
        if (scope.parent == null) {
            TOP.remove();
        } else {
            TOP.set(scope.parent);
        }
        if (leaked > 0) {
            throw new IllegalStateException(leaked + " inner fencing scope(s) were still open when an outer scope "
                    + "closed; they were closed too (they bound " + tokensBetween(top, scope) + "). Close scopes "
                    + "innermost first (use try-with-resources)");
        }
    }
}
