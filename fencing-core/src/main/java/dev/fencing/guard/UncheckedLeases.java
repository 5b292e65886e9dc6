package dev.fencing.guard;

import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;

/**
 * Reports an acquiring call that returned while no check had presented its lock's token and no carrier had sent it
 * (see {@link dev.fencing.context.TokenUse}): whatever the call wrote, no fence compared its token, so a paused holder
 * could have written over a newer one. Counted in {@code fencing.leases.unchecked} every time, and logged at WARNING
 * the first time for each method. Used by the blocking and the reactive guard.
 */
public final class UncheckedLeases {

    private static final System.Logger LOG = System.getLogger(UncheckedLeases.class.getName());

    private UncheckedLeases() {
    }

    /** Counts the unchecked call of {@code point} under {@code token}, and logs it if it is the point's first. */
    public static void report(FencePoint point, FencingToken token) {
        FencingMetrics.increment(point.acquisitions().unchecked());
        if (point.firstUncheckedLease()) {
            LOG.log(System.Logger.Level.WARNING, () -> message(point, token));
        }
    }

    static String message(FencePoint point, FencingToken token) {
        return "@Fenced(acquire = true) on " + point.operation() + " returned and gave its lock on '"
                + token.resource() + "' back, and no @Fenced check presented its token (" + token.value()
                + ") while it held the lock, nor did a carrier send the token to another service: nothing fenced "
                + "what this call wrote, so a holder paused past its lease could have written over a newer one. "
                + "Put @Fenced(resource = \"" + point.resource() + "\") (and the same key) on the method that "
                + "writes, such as a repository method; when the check runs in another service, send the token "
                + "with fencing-web's or fencing-amqp's carrier (a carrier of your own calls "
                + "FencingSnapshot.markSent). Counted in fencing.leases.unchecked; logged once per method";
    }
}
