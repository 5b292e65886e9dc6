package dev.fencing.guard;

import dev.fencing.context.ThreadNames;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;


/**
 * The log line of a token the fence refused in enforce mode (stale, duplicate, out of range, forged, missing): a
 * WARNING, at most one per method and verdict per minute, so that an operator reading the log sees the zombie refused
 * beside its lost-lease line, without a flood of refusals hiding everything else. Observe mode logs its would-be
 * refusals the same way ({@code ObservedCalls}). Only on the refusal path; never throws.
 */
final class RefusalLog {

    static final long INTERVAL_MILLIS = 60_000;

    /** Beyond this many methods and verdicts, further ones are not logged (counted as always). */
    private static final int MAX_KEYS = 1_000;

    private static final System.Logger LOG = System.getLogger(RefusalLog.class.getName());

    private static final LogPace PACE = new LogPace(MAX_KEYS, INTERVAL_MILLIS, null);

    private RefusalLog() {
    }

    /**
     * A call refused because no token was bound for its resource: logged too, since its exception may end where nobody
     * reads it (a task handed to an executor and never joined).
     */
    static void missing(String operation, String resource) {
        try {
            if (PACE.due(operation + "\u0000missing", System.currentTimeMillis()) < 0) {
                return;
            }
            LOG.log(System.Logger.Level.WARNING, "Refused {0} (missing) on resource ''{1}'': no fencing token was "
                            + "bound for it (thread {2}); the call did not run. The write was reached without its "
                            + "token: no lock taken and no request or message header carrying one, or a thread or "
                            + "reactive chain the token did not follow (an executor without the task decorator, "
                            + "CompletableFuture.runAsync, a parallel stream; a publisher subscribed outside the "
                            + "context that bound it). At most one such line per method and outcome per minute; see "
                            + "fencing.checks'{'outcome=\"missing\"'}' for every count",
                    operation, FencingToken.printable(resource), ThreadNames.of(Thread.currentThread()));
        } catch (RuntimeException ignored) {
            // logging is advisory
        }
    }

    /**
     * An acquiring call refused because it runs inside one whose lock, {@code around}, is known lost or given back:
     * counted under {@code fencing.acquisitions}, not {@code fencing.checks}.
     */
    static void nestedAcquire(String operation, String resource, FencingToken around) {
        try {
            if (PACE.due(operation + "\u0000nested", System.currentTimeMillis()) < 0) {
                return;
            }
            LOG.log(System.Logger.Level.WARNING, "Refused {0}, which acquires resource ''{1}'': it runs inside an "
                            + "acquiring call whose lock on ''{2}'' (token {3}) is known lost or given back in this "
                            + "process, so work nested in it stops (no lock of its own was kept; thread {4}). At most "
                            + "one such line per method per minute; see fencing.acquisitions'{'outcome=\"failed\", "
                            + "exception=\"StaleTokenException\"'}' for every count",
                    operation, FencingToken.printable(resource), FencingToken.printable(around.resource()),
                    Long.toString(around.value()), ThreadNames.of(Thread.currentThread()));
        } catch (RuntimeException ignored) {
            // logging is advisory
        }
    }

    static void refused(String operation, TokenRejectedException e) {
        try {
            String outcome = e.verdict().outcome();
            String key = operation + '\u0000' + outcome;
            if (PACE.due(key, System.currentTimeMillis()) < 0) {
                return;
            }
            FencingToken around = e instanceof dev.fencing.rule.StaleTokenException nested ? nested.enclosingLock()
                    : null;
            String detail = e instanceof ForgedTokenException forged ? forged.reason() + " (max_seen untouched)"
                    : around != null ? "it runs inside an acquiring call whose lock on '"
                    + FencingToken.printable(around.resource()) + "' (token " + around.value() + ") is known lost or "
                    + "given back in this process (work nested in it stops; the store was not asked)"
                    : e instanceof dev.fencing.rule.StaleTokenException stale && stale.lockLost()
                    ? "its lock is known lost or given back in this process (its lease ended, or its acquiring call "
                    + "returned before this write; the store was not asked)"
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
