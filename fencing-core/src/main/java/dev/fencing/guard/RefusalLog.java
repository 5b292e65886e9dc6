package dev.fencing.guard;

import dev.fencing.rule.ForgedTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;


/**
 * The log line of a token the fence refused in enforce mode (stale, duplicate, out of range, forged): a WARNING, at
 * most one per method and verdict per minute, so that an operator reading the log sees the zombie refused beside its
 * lost-lease line, without a flood of refusals hiding everything else. Observe mode logs its would-be refusals the
 * same way ({@code ObservedCalls}). Only on the refusal path; never throws.
 */
final class RefusalLog {

    static final long INTERVAL_MILLIS = 60_000;

    /** Beyond this many methods and verdicts, further ones are not logged (counted as always). */
    private static final int MAX_KEYS = 1_000;

    private static final System.Logger LOG = System.getLogger(RefusalLog.class.getName());

    private static final LogPace PACE = new LogPace(MAX_KEYS, INTERVAL_MILLIS, null);

    private RefusalLog() {
    }

    static void refused(String operation, TokenRejectedException e) {
        try {
            String outcome = e.verdict().outcome();
            String key = operation + '\u0000' + outcome;
            if (PACE.due(key, System.currentTimeMillis()) < 0) {
                return;
            }
            String detail = e instanceof ForgedTokenException forged ? forged.reason() + " (max_seen untouched)"
                    : "max_seen " + e.maxSeen();
            LOG.log(System.Logger.Level.WARNING, "Refused {0} ({1}) on resource ''{2}'': token {3}, {4}; the "
                            + "call did not run. At most one such line per method and outcome per minute; see "
                            + "fencing.checks'{'outcome=\"{1}\"'}' for every count",
                    operation, outcome, FencingToken.printable(e.resource()), Long.toString(e.presented().value()),
                    detail);
        } catch (RuntimeException ignored) {
            // logging is advisory
        }
    }
}
