package dev.fencing.context;

import io.micrometer.context.ContextExecutorService;
import io.micrometer.context.ContextSnapshot;
import io.micrometer.context.ContextSnapshotFactory;

import java.util.concurrent.Callable;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.function.Supplier;

/**
 * Carries the tokens bound on the calling thread into work that runs elsewhere, for code without Spring: wrap a
 * task to capture now and bind on the thread that runs it, or wrap an executor to do that for every task (pass the
 * wrapped executor to each {@code CompletableFuture.*Async} stage). Built on Micrometer's context-propagation, so
 * the rest of the registered context (trace ids, MDC, ...) travels too. The running thread is restored afterwards.
 */
public final class FencingPropagation {

    private static final ContextSnapshotFactory SNAPSHOTS = ContextSnapshotFactory.builder().clearMissing(true).build();

    private FencingPropagation() {
    }

    /** Captures the current context now; run the result anywhere. */
    public static Runnable runnable(Runnable task) {
        return SNAPSHOTS.captureAll().wrap(task);
    }

    /** Captures the current context now; call the result anywhere. */
    public static <T> Callable<T> callable(Callable<T> task) {
        return SNAPSHOTS.captureAll().wrap(task);
    }

    /** Captures the current context now; get from the result anywhere. */
    public static <T> Supplier<T> supplier(Supplier<T> task) {
        ContextSnapshot snapshot = SNAPSHOTS.captureAll();
        return () -> {
            try (ContextSnapshot.Scope ignored = snapshot.setThreadLocals()) {
                return task.get();
            }
        };
    }

    /** An executor whose tasks run with the context of the thread that submitted them. */
    public static Executor executor(Executor executor) {
        return task -> executor.execute(SNAPSHOTS.captureAll().wrap(task));
    }

    /** An executor service whose tasks run with the context of the thread that submitted them. */
    public static ExecutorService executorService(ExecutorService executor) {
        return ContextExecutorService.wrap(executor, SNAPSHOTS::captureAll);
    }
}
