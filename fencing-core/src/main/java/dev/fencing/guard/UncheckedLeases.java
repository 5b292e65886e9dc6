package dev.fencing.guard;

import dev.fencing.context.TokenUse;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Reports a lock that acquiring calls held and gave back while no check presented its token and no carrier sent it
 * (see {@link dev.fencing.context.TokenUse}): whatever those calls wrote, no fence compared its token, so a holder
 * paused past its lease could have written over a newer one. Counted in {@code fencing.leases.unchecked} once per
 * lock, and logged at WARNING the first time for each method. Points with
 * {@link FencePoint#reportUnchecked()} {@code false} are left out. Used by the blocking and the reactive guard.
 */
public final class UncheckedLeases {

    private static final System.Logger LOG = System.getLogger(UncheckedLeases.class.getName());

    private UncheckedLeases() {
    }

    /** Reports the lock of {@code token} that {@code point}'s call held and gave back unchecked. */
    public static void report(FencePoint point, FencingToken token) {
        report(List.of(point), token);
    }

    /**
     * Reports the lock of {@code token}, held by calls of {@code points} (in the order they ran: several when a
     * transaction held it across acquiring calls) and given back unchecked; nothing when none of them reports.
     */
    public static void report(List<FencePoint> points, FencingToken token) {
        List<FencePoint> reporting = points.stream().filter(FencePoint::reportUnchecked).toList();
        if (reporting.isEmpty()) {
            return;
        }
        FencingMetrics.increment(reporting.get(0).acquisitions().unchecked());
        boolean first = false;
        for (FencePoint point : reporting) {
            first |= point.firstUncheckedLease();
        }
        if (first) {
            LOG.log(System.Logger.Level.WARNING, () -> message(reporting, token));
        }
    }

    /**
     * Reports the lock of {@code token}, given back unchecked, for the acquiring calls {@code use} recorded as having
     * run under it ({@link TokenUse#ranUnder}); nothing when none ran, or none reports.
     */
    public static void reportCallers(TokenUse use, FencingToken token) {
        List<FencePoint> points = new ArrayList<>();
        for (Object caller : use.callers()) {
            if (caller instanceof FencePoint point) {
                points.add(point);
            }
        }
        if (!points.isEmpty()) {
            report(points, token);
        }
    }

    static String message(List<FencePoint> points, FencingToken token) {
        FencePoint point = points.get(0);
        String methods = points.stream().map(FencePoint::operation).collect(Collectors.joining(", "));
        String annotation = "@Fenced(resource = \"" + point.resource() + "\""
                + (point.keySource() == null ? "" : ", key = \"" + point.keySource() + "\"") + ")";
        boolean one = points.size() == 1;
        return "@Fenced(acquire = true) on " + methods + " held the lock on '" + token.resource() + "' (token "
                + token.value() + ") and no @Fenced check presented its token, nor did a carrier send it: whatever "
                + (one ? "the call" : "those calls") + " wrote was not fenced, or was checked only after the lock was "
                + "given back (work handed to another thread, an @Async method, that the call did not wait for). "
                + "Write through a method with "
                + annotation + ", and wait for writes handed to other threads. " + (one ? "If the method"
                : "A method that") + " only reads, or writes on some paths only, takes reportUnchecked = false. "
                + "Counted in fencing.leases.unchecked; logged once per method";
    }
}
