package dev.fencing.reactive;

import dev.fencing.guard.LeftScopes;
import dev.fencing.metrics.FencingMetrics;
import reactor.core.scheduler.Schedulers;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Objects;

/**
 * Closes, at the end of each task a Reactor {@code Scheduler} runs ({@code subscribeOn(boundedElastic())}, a
 * {@code publishOn}, a timer), the fencing scopes the task left open on the worker thread, and reports them
 * ({@value FencingMetrics#LEFT_SCOPES}, {@code carrier=reactor}, and an ERROR line). Without that, a later task on
 * that pooled worker (another request's blocking call handed to {@code boundedElastic}) would find the token and
 * write under it. One JVM-wide schedule hook ({@link Schedulers#onScheduleHook}, under {@link #KEY}), run by the
 * instance installed last: {@link #close()} takes an instance out, and the one installed before it that is still open
 * (another application context in this JVM, a test's cached context) runs the hook again, so closing one context
 * leaves the others protected; {@link #uninstall()} removes the hook and every instance. What the tasks leave is
 * counted by the instance running the hook. Each task takes a mark of the thread's bindings before it runs (no
 * allocation beyond the mark) and compares it after.
 */
public final class LeftScopesOnSchedulers implements AutoCloseable {

    /** The key of the schedule hook. */
    public static final String KEY = "dev.fencing.leftScopes";

    /** The {@code carrier} tag of what this hook closes. */
    static final String CARRIER = "reactor";

    private static final String PLACE = "A task on a Reactor scheduler";

    /** The instances installed and not closed, the one running the hook last; guarded by itself. */
    private static final Deque<LeftScopesOnSchedulers> INSTALLED = new ArrayDeque<>();

    private final LeftScopes leaks;

    /** @param metrics where to count what the tasks leave ({@link FencingMetrics#noop()}: logged only) */
    public LeftScopesOnSchedulers(FencingMetrics metrics) {
        this.leaks = new LeftScopes(Objects.requireNonNull(metrics, "metrics"), CARRIER, "task");
    }

    /**
     * Installs the hook for every Reactor scheduler of this JVM, run by this instance until it is closed (the
     * instance installed before it runs it again then); returns this.
     */
    public LeftScopesOnSchedulers install() {
        synchronized (INSTALLED) {
            INSTALLED.remove(this);
            INSTALLED.addLast(this);
            Schedulers.onScheduleHook(KEY, this::decorate);
        }
        return this;
    }

    /** Removes the hook, whichever instances installed it, and forgets them all. */
    public static void uninstall() {
        synchronized (INSTALLED) {
            INSTALLED.clear();
            Schedulers.resetOnScheduleHook(KEY);
        }
    }

    /**
     * Takes this instance out: when it runs the hook, the latest instance installed before it and still open runs it
     * from now on, or, when there is none, the hook is removed. Closing it again does nothing.
     */
    @Override
    public void close() {
        synchronized (INSTALLED) {
            boolean running = INSTALLED.peekLast() == this;
            if (!INSTALLED.remove(this) || !running) {
                return;
            }
            LeftScopesOnSchedulers previous = INSTALLED.peekLast();
            if (previous == null) {
                Schedulers.resetOnScheduleHook(KEY);
            } else {
                Schedulers.onScheduleHook(KEY, previous::decorate);
            }
        }
    }

    private Runnable decorate(Runnable task) {
        return () -> leaks.run(PLACE, task);
    }
}
