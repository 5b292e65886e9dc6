package dev.fencing.context;

import io.micrometer.context.ThreadLocalAccessor;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Makes the bound tokens part of the context that Micrometer's context-propagation carries across threads
 * (Spring's {@code ContextPropagatingTaskDecorator}, Reactor's automatic propagation, {@code ContextSnapshot} and
 * {@code ContextExecutorService}). Registered through {@code META-INF/services}, so nothing needs configuring.
 * On the receiving thread the captured tokens are bound exactly, each with its origin (see
 * {@link FencingContext#bindOnly(FencingSnapshot)}: a token that arrived in a request header stays good for checks
 * only); when nothing was captured, the thread sees no token at all; afterwards the thread is restored.
 */
public final class FencingThreadLocalAccessor implements ThreadLocalAccessor<FencingSnapshot> {

    /** The key under which the tokens travel. */
    public static final String KEY = "dev.fencing.tokens";

    /** The scopes this accessor opened on each thread, to close exactly those on restore. */
    private static final ThreadLocal<Deque<FencingScope>> OPENED = new ThreadLocal<>();

    @Override
    public Object key() {
        return KEY;
    }

    /**
     * The visible tokens with their origins; an empty snapshot (never {@code null}) when none are bound, so that
     * "no token" is captured too and a pooled thread's leftovers are hidden from the task even where missing values
     * are not cleared.
     */
    @Override
    public FencingSnapshot getValue() {
        return FencingContext.snapshot();
    }

    @Override
    public void setValue(FencingSnapshot tokens) {
        open(FencingContext.bindOnly(tokens));
    }

    /** Nothing was captured: the task must not see whatever this thread had bound. */
    @Override
    public void setValue() {
        open(FencingContext.bindOnly(FencingSnapshot.EMPTY));
    }

    @Override
    public void restore(FencingSnapshot previous) {
        close();
    }

    @Override
    public void restore() {
        close();
    }

    @Override
    public void reset() {
        close();
    }

    private static void open(FencingScope scope) {
        Deque<FencingScope> opened = OPENED.get();
        if (opened == null) {
            opened = new ArrayDeque<>();
            OPENED.set(opened);
        }
        opened.push(scope);
    }

    private static void close() {
        Deque<FencingScope> opened = OPENED.get();
        if (opened == null) {
            return;
        }
        FencingScope scope = opened.pop();
        if (opened.isEmpty()) {
            OPENED.remove();
        }
        FencingContext.closeQuietly(scope);
    }
}
