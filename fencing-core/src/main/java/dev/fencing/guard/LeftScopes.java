package dev.fencing.guard;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.ThreadNames;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;

import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Internal: public for the carriers (fencing-web's filters, fencing-amqp's listener advice), not for applications.
 * Reports the fencing scopes a request or message left open on its pooled thread ({@code FencingContext.bind}
 * without closing its scope), once the carrier has closed them: counted in {@value FencingMetrics#LEFT_SCOPES}
 * ({@code carrier} tag) and logged at ERROR, at most once a minute per place (a bounded number of places). Left open,
 * the next request or message on that thread would write under their tokens. Thread-safe; only on the leak path.
 */
public final class LeftScopes {

    private static final System.Logger LOG = System.getLogger(LeftScopes.class.getName());

    private final LogPace pace = new LogPace(1_000, 60_000, "other");
    private final Counter counter;
    private final String next;

    /**
     * @param metrics where to count ({@link FencingMetrics#noop()}: nowhere; the ERROR is logged either way)
     * @param carrier the {@code carrier} tag: {@code http}, {@code amqp}
     * @param next    what the thread runs next, for the log line: {@code request}, {@code message}
     */
    public LeftScopes(FencingMetrics metrics, String carrier, String next) {
        this.counter = Objects.requireNonNull(metrics, "metrics").leftScopes(Objects.requireNonNull(carrier,
                "carrier"));
        this.next = Objects.requireNonNull(next, "next");
    }

    /**
     * Closes the carrier's own {@code scope}, and with it whatever was left open above it, which is reported rather
     * than thrown: the request's answer or the listener's work is done, and the thread is clean either way (a failed
     * delivery would be redelivered, and leak again, without end).
     *
     * @param place the request or listener, for the log line (asked only on a leak)
     */
    public void close(FencingScope scope, Supplier<String> place) {
        try {
            scope.close();
        } catch (IllegalStateException leaked) {
            report(place.get(), leaked.getMessage());
        }
    }

    /**
     * Runs {@code task}, then closes and reports whatever it left bound on this thread (what was bound before it
     * runs stays): the pooled worker is clean for its next task.
     *
     * @param place the task's kind, for the log line
     */
    public void run(String place, Runnable task) {
        FencingContext.Mark mark = FencingContext.mark();
        try {
            task.run();
        } finally {
            List<FencingToken> left = FencingContext.closeSince(mark);
            if (!left.isEmpty()) {
                report(place, left);
            }
        }
    }

    /** Reports {@code left}, the tokens of scopes {@code place} left open and that were closed since. */
    public void report(String place, List<FencingToken> left) {
        report(place, left.stream().map(FencingToken::toString).collect(Collectors.joining(", ")));
    }

    private void report(String place, String left) {
        FencingMetrics.increment(counter);
        long heldBack = pace.due(place, System.currentTimeMillis());
        if (heldBack < 0) {
            return;
        }
        String thread = ThreadNames.of(Thread.currentThread());
        LOG.log(System.Logger.Level.ERROR, () -> place + " left fencing tokens bound on its thread (" + thread + "): "
                + left + ". They are unbound now; without that, the next " + next + " on this pooled thread would "
                + "write under them, as if it held their locks. Close what you bind: try (FencingScope scope = "
                + "FencingContext.bind(token)) { ... }, or FencingContext.run(token, () -> ...); counted in "
                + FencingMetrics.LEFT_SCOPES
                + (heldBack > 0 ? " (" + heldBack + " more such leaks here since the last line)" : ""));
    }
}
