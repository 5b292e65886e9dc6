package dev.fencing.reactive;

import dev.fencing.context.FencingContext;
import dev.fencing.guard.LeftScopes;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;
import reactor.core.scheduler.Schedulers;

import java.util.List;
import java.util.Objects;

/**
 * Closes, at the end of each task a Reactor {@code Scheduler} runs ({@code subscribeOn(boundedElastic())}, a
 * {@code publishOn}, a timer), the fencing scopes the task left open on the worker thread, and reports them
 * ({@value FencingMetrics#LEFT_SCOPES}, {@code carrier=reactor}, and an ERROR line). Without that, a later task on
 * that pooled worker (another request's blocking call handed to {@code boundedElastic}) would find the token and
 * write under it. One JVM-wide schedule hook ({@link Schedulers#onScheduleHook}, under {@link #KEY}):
 * {@link #install()} replaces the one installed before, {@link #uninstall()} removes it. Each task takes a mark of the
 * thread's bindings before it runs (no allocation beyond the mark) and compares it after.
 */
public final class LeftScopesOnSchedulers implements AutoCloseable {

    /** The key of the schedule hook. */
    public static final String KEY = "dev.fencing.leftScopes";

    /** The {@code carrier} tag of what this hook closes. */
    static final String CARRIER = "reactor";

    private static final String PLACE = "A task on a Reactor scheduler";

    private final LeftScopes leaks;

    /** @param metrics where to count what the tasks leave ({@link FencingMetrics#noop()}: logged only) */
    public LeftScopesOnSchedulers(FencingMetrics metrics) {
        this.leaks = new LeftScopes(Objects.requireNonNull(metrics, "metrics"), CARRIER, "task");
    }

    /** Installs the hook for every Reactor scheduler of this JVM, replacing an earlier one; returns this. */
    public LeftScopesOnSchedulers install() {
        Schedulers.onScheduleHook(KEY, task -> () -> run(task));
        return this;
    }

    /** Removes the hook (whichever instance installed it). */
    public static void uninstall() {
        Schedulers.resetOnScheduleHook(KEY);
    }

    /** {@link #uninstall()}. */
    @Override
    public void close() {
        uninstall();
    }

    private void run(Runnable task) {
        FencingContext.Mark mark = FencingContext.mark();
        try {
            task.run();
        } finally {
            List<FencingToken> left = FencingContext.closeSince(mark);
            if (!left.isEmpty()) {
                leaks.report(PLACE, left);
            }
        }
    }
}
