package dev.fencing.rule;

import dev.fencing.token.FencingToken;

/**
 * A write refused because its token failed signature verification ({@link Verdict#REJECT_FORGED}): unsigned where
 * signatures are required, signed with an unknown or retired key, or with a signature that does not match. It is
 * thrown before any store sees the token, so max_seen is untouched and {@link #maxSeen()} is {@link #NOT_CONSULTED}.
 * The message names the resource, the fenced operation and why, never key material or the signature.
 */
public final class ForgedTokenException extends TokenRejectedException {

    private static final long serialVersionUID = 1L;

    /** {@link #maxSeen()} of a forged token: the store was never asked. */
    public static final long NOT_CONSULTED = -1;

    private final String reason;

    /**
     * @param resource  the effective resource the token was presented for
     * @param presented the refused token
     * @param reason    why verification failed, in words that contain no key material (e.g. "key 'k0' is retired")
     * @param operation the fenced operation, or {@code null} when unknown
     */
    public ForgedTokenException(String resource, FencingToken presented, String reason, String operation) {
        super("Forged fencing token for resource '" + FencingToken.printable(resource) + "'" + where(operation)
                        + ": " + reason + "; the token (value " + presented.value() + ", holder '"
                        + FencingToken.printable(presented.holder()) + "') was refused before the fence store saw it, "
                        + "max_seen is untouched",
                resource, presented, NOT_CONSULTED, Verdict.REJECT_FORGED, operation);
        this.reason = reason;
    }

    /** Why verification failed, e.g. "the token is unsigned" or "key 'k0' is retired". */
    public String reason() {
        return reason;
    }

    @Override
    public ForgedTokenException at(String operation) {
        ForgedTokenException named = new ForgedTokenException(resource(), presented(), reason, operation);
        named.setStackTrace(getStackTrace());
        return named;
    }
}
