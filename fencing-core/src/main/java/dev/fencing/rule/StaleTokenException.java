package dev.fencing.rule;

import dev.fencing.token.FencingToken;

/**
 * A write refused because its token is smaller than max_seen ({@link Verdict#REJECT_STALE}): a newer holder has
 * written. See {@link TokenRejectedException} for what it carries.
 */
public final class StaleTokenException extends TokenRejectedException {

    private static final long serialVersionUID = 1L;

    public StaleTokenException(String resource, FencingToken presented, long maxSeen) {
        this(resource, presented, maxSeen, null);
    }

    public StaleTokenException(String resource, FencingToken presented, long maxSeen, String operation) {
        super("Stale fencing token for resource '" + FencingToken.printable(resource) + "'" + where(operation)
                        + ": presented " + presented.value() + " (holder '" + FencingToken.printable(presented.holder())
                        + "') but max_seen is " + maxSeen
                        + "; a newer holder has written, this call is refused",
                resource, presented, maxSeen, Verdict.REJECT_STALE, operation);
    }

    @Override
    public StaleTokenException at(String operation) {
        return (StaleTokenException) super.at(operation);
    }
}
