package dev.fencing.context;

import dev.fencing.token.FencingToken;
import io.micrometer.context.ContextExecutorService;
import io.micrometer.context.ContextSnapshot;
import io.micrometer.context.ContextSnapshotFactory;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Carries the tokens bound on the calling thread into work that runs elsewhere, for code without Spring: wrap a
 * task to capture now and bind on the thread that runs it, or wrap an executor to do that for every task (pass the
 * wrapped executor to each {@code CompletableFuture.*Async} stage). Built on Micrometer's context-propagation, so
 * the rest of the registered context (trace ids, MDC, ...) travels too. The running thread is restored afterwards:
 * what the task itself left bound ({@code FencingContext.bind} never closed) is closed when it ends and logged at
 * ERROR (at most a line a minute), so the pool thread's next task never writes under it.
 */
public final class FencingPropagation {

    private static final ContextSnapshotFactory SNAPSHOTS = ContextSnapshotFactory.builder().clearMissing(true).build();

    private static final System.Logger LOG = System.getLogger(FencingPropagation.class.getName());
    private static final long LOG_INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(1);
    private static final AtomicLong NEXT_LINE = new AtomicLong(System.nanoTime());
    private static final AtomicLong HELD_BACK = new AtomicLong();

    private FencingPropagation() {
    }

    /** Captures the current context now; run the result anywhere. */
    public static Runnable runnable(Runnable task) {
        return SNAPSHOTS.captureAll().wrap(closingLeft(task));
    }

    /** Captures the current context now; call the result anywhere. */
    public static <T> Callable<T> callable(Callable<T> task) {
        return SNAPSHOTS.captureAll().wrap(closingLeft(task));
    }

    /** Captures the current context now; get from the result anywhere. */
    public static <T> Supplier<T> supplier(Supplier<T> task) {
        ContextSnapshot snapshot = SNAPSHOTS.captureAll();
        return () -> {
            try (ContextSnapshot.Scope ignored = snapshot.setThreadLocals()) {
                FencingContext.Mark mark = FencingContext.mark();
                try {
                    return task.get();
                } finally {
                    report(FencingContext.closeSince(mark));
                }
            }
        };
    }

    /** An executor whose tasks run with the context of the thread that submitted them. */
    public static Executor executor(Executor executor) {
        return task -> executor.execute(SNAPSHOTS.captureAll().wrap(closingLeft(task)));
    }

    /** An executor service whose tasks run with the context of the thread that submitted them. */
    public static ExecutorService executorService(ExecutorService executor) {
        return new ClosingLeft(ContextExecutorService.wrap(executor, SNAPSHOTS::captureAll));
    }

    /** For tests: the next leak is logged, whenever the last line was. */
    static void logNextLeak() {
        NEXT_LINE.set(System.nanoTime());
    }

    /** {@code task}, then what it left bound closed and reported; run inside the propagated context's scope. */
    private static Runnable closingLeft(Runnable task) {
        return () -> {
            FencingContext.Mark mark = FencingContext.mark();
            try {
                task.run();
            } finally {
                report(FencingContext.closeSince(mark));
            }
        };
    }

    private static <T> Callable<T> closingLeft(Callable<T> task) {
        return () -> {
            FencingContext.Mark mark = FencingContext.mark();
            try {
                return task.call();
            } finally {
                report(FencingContext.closeSince(mark));
            }
        };
    }

    private static void report(List<FencingToken> left) {
        if (left.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        long next = NEXT_LINE.get();
        if (now - next < 0 || !NEXT_LINE.compareAndSet(next, now + LOG_INTERVAL_NANOS)) {
            HELD_BACK.incrementAndGet();
            return;
        }
        long heldBack = HELD_BACK.getAndSet(0);
        String thread = ThreadNames.of(Thread.currentThread());
        LOG.log(System.Logger.Level.ERROR, () -> "A task run through FencingPropagation left fencing tokens bound "
                + "on its thread (" + thread + "): " + left + ". They are unbound now; without that, the next task "
                + "on this pooled thread would write under them, as if it held their locks. Close what you bind: try "
                + "(FencingScope scope = FencingContext.bind(token)) { ... }, or FencingContext.run(token, () -> ...)"
                + (heldBack > 0 ? " (" + heldBack + " more such leaks since the last line)" : ""));
    }

    /**
     * Hands every task to the context-propagating service wrapped in {@link #closingLeft(Runnable)}: submitted on the
     * caller's thread, so the context is captured there, and run inside the context's scope.
     */
    private static final class ClosingLeft extends AbstractExecutorService {
        private final ExecutorService delegate;

        ClosingLeft(ExecutorService delegate) {
            this.delegate = delegate;
        }

        @Override
        public void execute(Runnable command) {
            delegate.execute(closingLeft(command));
        }

        @Override
        public void shutdown() {
            delegate.shutdown();
        }

        @Override
        public List<Runnable> shutdownNow() {
            return delegate.shutdownNow();
        }

        @Override
        public boolean isShutdown() {
            return delegate.isShutdown();
        }

        @Override
        public boolean isTerminated() {
            return delegate.isTerminated();
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
            return delegate.awaitTermination(timeout, unit);
        }
    }
}
