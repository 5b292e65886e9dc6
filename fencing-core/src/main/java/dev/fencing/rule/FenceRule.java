package dev.fencing.rule;

import dev.fencing.token.FencingToken;

/**
 * The compare rule every store applies, as one pure function: newer is accepted, equal is accepted only from the
 * holder that first presented it, anything else is rejected. Stores that cannot call Java (a SQL statement) must
 * reach the same verdicts; the store contract suite checks that they do.
 */
public final class FenceRule {

    /** The bound of a store without one: any advance is accepted (the default). */
    public static final long UNBOUNDED = Long.MAX_VALUE;

    /**
     * Checks a configured bound on one advance ({@code maxAdvance}).
     *
     * @param owner what is configured, for the message (for example {@code JdbcFenceStore})
     * @throws IllegalArgumentException when {@code maxAdvance} is below 1
     */
    public static long checkMaxAdvance(String owner, long maxAdvance) {
        if (maxAdvance < 1) {
            throw new IllegalArgumentException(owner + " maxAdvance must be at least 1 (or FenceRule.UNBOUNDED), was "
                    + maxAdvance);
        }
        return maxAdvance;
    }

    private FenceRule() {
    }

    /**
     * Judges a presented token against a resource's state.
     *
     * @param seen          whether the resource has a max_seen at all; when not, any token is newer
     * @param maxSeen       the highest accepted value (ignored when {@code seen} is false)
     * @param maxSeenHolder the holder that advanced max_seen, {@code null} when unknown (then an equal token is a
     *                      duplicate)
     * @param presented     the token presented with the write
     */
    public static Verdict judge(boolean seen, long maxSeen, String maxSeenHolder, FencingToken presented) {
        return judge(seen, maxSeen, maxSeenHolder, presented, UNBOUNDED);
    }

    /**
     * {@link #judge(boolean, long, String, FencingToken)} with a bound on one advance: a token more than
     * {@code maxAdvance} above max_seen is {@link Verdict#REJECT_OUT_OF_RANGE}. A resource without max_seen has
     * nothing to compare against: its first token is accepted whatever its value.
     *
     * @param maxAdvance how far one token may move max_seen, at least 1; {@link #UNBOUNDED} for no bound
     */
    public static Verdict judge(boolean seen, long maxSeen, String maxSeenHolder, FencingToken presented,
                                long maxAdvance) {
        if (seen && presented.value() > maxSeen && presented.value() - maxSeen > maxAdvance) {
            return Verdict.REJECT_OUT_OF_RANGE; // both positive: the difference cannot overflow
        }
        if (!seen || presented.value() > maxSeen) {
            return Verdict.ACCEPT_NEWER;
        }
        if (presented.value() < maxSeen) {
            return Verdict.REJECT_STALE;
        }
        return presented.holder().equals(maxSeenHolder) ? Verdict.ACCEPT_SAME_HOLDER : Verdict.REJECT_DUPLICATE;
    }
}
