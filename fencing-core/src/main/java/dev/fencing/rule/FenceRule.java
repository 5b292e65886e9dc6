package dev.fencing.rule;

import dev.fencing.token.FencingToken;

/**
 * The compare rule every store applies, as one pure function: newer is accepted, equal is accepted only from the
 * holder that first presented it, anything else is rejected. Stores that cannot call Java (a SQL statement) must
 * reach the same verdicts; the store contract suite checks that they do.
 */
public final class FenceRule {

    private FenceRule() {
    }

    /**
     * Judges a presented token against a resource's state.
     *
     * @param seen          whether the resource has a max_seen at all; when not, any token is newer
     * @param maxSeen       the highest accepted value (ignored when {@code seen} is false)
     * @param maxSeenHolder the holder that advanced max_seen, {@code null} when unknown (then an equal token is a duplicate)
     * @param presented     the token presented with the write
     */
    public static Verdict judge(boolean seen, long maxSeen, String maxSeenHolder, FencingToken presented) {
        if (!seen || presented.value() > maxSeen) {
            return Verdict.ACCEPT_NEWER;
        }
        if (presented.value() < maxSeen) {
            return Verdict.REJECT_STALE;
        }
        return presented.holder().equals(maxSeenHolder) ? Verdict.ACCEPT_SAME_HOLDER : Verdict.REJECT_DUPLICATE;
    }
}
