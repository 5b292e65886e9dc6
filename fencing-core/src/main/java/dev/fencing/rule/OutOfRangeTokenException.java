package dev.fencing.rule;

import dev.fencing.token.FencingToken;

/**
 * A write refused because its token is further above max_seen than the store's bound on one advance
 * ({@link Verdict#REJECT_OUT_OF_RANGE}): the bound is sized so that the issuer never jumps that far, so the token is
 * taken as forged or corrupted (or the bound as too small for the issuer) and max_seen is left where it was. Only
 * stores configured with {@code maxAdvance} raise it; see {@link TokenRejectedException} for what it carries.
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
                        + maxSeen + " than the store's maxAdvance allows, so it is refused as forged or corrupted "
                        + "and max_seen is unchanged (if a real holder's, the bound is too small for the issuer: "
                        + "ZooKeeper's, etcd's and an offset issuer's tokens jump further; docs/operations.md)",
                resource, presented, maxSeen, Verdict.REJECT_OUT_OF_RANGE, operation);
    }

    @Override
    public OutOfRangeTokenException at(String operation) {
        return (OutOfRangeTokenException) super.at(operation);
    }
}
