package dev.fencing.rule;

import dev.fencing.token.FencingToken;

/**
 * A write refused because its token equals max_seen but comes from another holder ({@link Verdict#REJECT_DUPLICATE}):
 * two holders must never write with one token. See {@link TokenRejectedException} for what it carries.
 */
public final class DuplicateTokenException extends TokenRejectedException {

    private static final long serialVersionUID = 1L;

    public DuplicateTokenException(String resource, FencingToken presented, long maxSeen) {
        this(resource, presented, maxSeen, null);
    }

    public DuplicateTokenException(String resource, FencingToken presented, long maxSeen, String operation) {
        super("Duplicate fencing token for resource '" + FencingToken.printable(resource) + "'" + where(operation)
                        + ": " + presented.value() + " from holder '" + FencingToken.printable(presented.holder())
                        + "' equals max_seen " + maxSeen
                        + ", which another holder presented first (or a floor raise or reset left there, with no "
                        + "holder); two holders must never write with one token",
                resource, presented, maxSeen, Verdict.REJECT_DUPLICATE, operation);
    }

    @Override
    public DuplicateTokenException at(String operation) {
        return (DuplicateTokenException) super.at(operation);
    }
}
