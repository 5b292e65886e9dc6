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
 * A thread that never had a binding sees none: tokens do not cross threads unless propagated explicitly.
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
        for (int i = 0; i < copy.length; i++) {
            Objects.requireNonNull(copy[i], "tokens[" + i + "]");
            for (int j = 0; j < i; j++) {
                if (copy[j].resource().equals(copy[i].resource())) {
                    throw new IllegalArgumentException("Two tokens for resource '" + copy[i].resource() + "' in one bind: "
                            + copy[j] + " and " + copy[i]);
                }
            }
        }
        return push(copy);
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
        }
        return Collections.unmodifiableMap(visible);
    }

    /** Whether nothing is bound on this thread. */
    public static boolean isEmpty() {
        return TOP.get() == null;
    }

    private static FencingScope push(FencingToken[] tokens) {
        FencingScope scope = new FencingScope(tokens, TOP.get(), Thread.currentThread());
        TOP.set(scope);
        return scope;
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
