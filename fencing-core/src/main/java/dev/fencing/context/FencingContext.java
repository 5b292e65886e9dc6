package dev.fencing.context;

import dev.fencing.token.FencingToken;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * The tokens bound to the current thread, per resource: what {@code @Fenced} methods check and what the client
 * side carries. Bindings are scoped ({@link #bind}, {@link #run}, {@link #call}) and nest; after the outermost scope
 * closes nothing remains on the thread (the thread-local is removed), also when the scope ends by an exception.
 * A thread that never had a binding sees none: tokens cross threads only when propagated, by
 * {@link FencingPropagation} or by Micrometer's context-propagation (through {@link FencingThreadLocalAccessor}).
 */
public final class FencingContext {

    private static final ThreadLocal<FencingScope> TOP = new ThreadLocal<>();

    private FencingContext() {
    }

    /** Binds {@code token} for its resource until the returned scope is closed. */
    public static FencingScope bind(FencingToken token) {
        Objects.requireNonNull(token, "token");
        return push(new FencingToken[] {token});
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
        return push(copy);
    }

    private static void checkDistinct(FencingToken[] copy) {
        for (int i = 0; i < copy.length; i++) {
            Objects.requireNonNull(copy[i], "tokens[" + i + "]");
            for (int j = 0; j < i; j++) {
                if (copy[j].resource().equals(copy[i].resource())) {
                    throw new IllegalArgumentException("Two tokens for resource '" + copy[i].resource() + "' in one bind: "
                            + copy[j] + " and " + copy[i]);
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

    /** The token bound for {@code resource} on this thread (innermost scope first), or {@code null}. */
    public static FencingToken current(String resource) {
        for (FencingScope scope = TOP.get(); scope != null; scope = scope.parent) {
            FencingToken token = scope.find(resource);
            if (token != null) {
                return token;
            }
            if (scope.isolating) {
                return null;
            }
        }
        return null;
    }

    /** Every token visible on this thread, one per resource (the innermost binding wins). Unmodifiable. */
    public static Map<String, FencingToken> snapshot() {
        FencingScope top = TOP.get();
        if (top == null) {
            return Map.of();
        }
        Map<String, FencingToken> visible = new LinkedHashMap<>();
        for (FencingScope scope = top; scope != null; scope = scope.parent) {
            for (FencingToken token : scope.tokens) {
                visible.putIfAbsent(token.resource(), token);
            }
            if (scope.isolating) {
                break;
            }
        }
        return Collections.unmodifiableMap(visible);
    }

    /**
     * Binds exactly {@code tokens} (typically captured on another thread with {@link #snapshot()}): bindings this
     * thread already had are hidden until the scope closes, so a pooled thread never mixes its leftovers with the
     * propagated context.
     */
    public static FencingScope bindOnly(Collection<FencingToken> tokens) {
        FencingToken[] copy = tokens.toArray(FencingToken[]::new);
        checkDistinct(copy);
        FencingScope scope = new FencingScope(copy, TOP.get(), Thread.currentThread(), true);
        TOP.set(scope);
        return scope;
    }

    /** Whether nothing is bound on this thread. */
    public static boolean isEmpty() {
        return TOP.get() == null;
    }

    private static FencingScope push(FencingToken[] tokens) {
        FencingScope scope = new FencingScope(tokens, TOP.get(), Thread.currentThread(), false);
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
                    + scope.owner.getName() + "), not on " + Thread.currentThread().getName());
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
                    + "closed; they were closed too. Close scopes innermost first (use try-with-resources)");
        }
    }
}
