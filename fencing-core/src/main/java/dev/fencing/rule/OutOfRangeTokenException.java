package dev.fencing.rule;

import dev.fencing.token.FencingToken;

/**
 * A write refused because its token is further above max_seen than the store's bound on one advance
 * ({@link Verdict#REJECT_OUT_OF_RANGE}): no issuer jumps that far, so the token is taken as forged or corrupted and
 * max_seen is left where it was. Only stores configured with {@code maxAdvance} raise it; see
 * {@link TokenRejectedException} for what it carries.
 */
public final class OutOfRangeTokenException extends TokenRejectedException {

    private static final long serialVersionUID = 1L;

    public OutOfRangeTokenException(String resource, FencingToken presented, long maxSeen) {
        this(resource, presented, maxSeen, null);
    }

    public OutOfRangeTokenException(String resource, FencingToken presented, long maxSeen, String operation) {
        super("Out-of-range fencing token for resource '" + FencingToken.printable(resource) + "'"
                        + where(operation) + ": presented " + presented.value() + " (holder '"
                        + FencingToken.printable(presented.holder()) + "') is further above max_seen "
                        + maxSeen + " than the store's maxAdvance allows; no issuer jumps that far, so it is refused "
                        + "as forged or corrupted and max_seen is unchanged",
                resource, presented, maxSeen, Verdict.REJECT_OUT_OF_RANGE, operation);
    }

    @Override
    public OutOfRangeTokenException at(String operation) {
        return (OutOfRangeTokenException) super.at(operation);
    }
}
