package dev.fencing.rule;

/**
 * The outcome of comparing a presented token with a resource's max_seen, one per row of the rule
 * ({@link FenceRule}). {@link #outcome()} is the value of the {@code outcome} tag on the {@code fencing.checks}
 * counter.
 */
public enum Verdict {

    /** Larger than max_seen (or the first token the resource sees): accepted, max_seen advances. */
    ACCEPT_NEWER(true, "accepted"),

    /** Equal to max_seen and presented by the holder that advanced it: accepted, nothing changes. */
    ACCEPT_SAME_HOLDER(true, "accepted"),

    /** Smaller than max_seen: a newer holder has written, this one is a zombie. */
    REJECT_STALE(false, "stale"),

    /** Equal to max_seen but from another holder: two clients hold one token, neither may write after the first. */
    REJECT_DUPLICATE(false, "duplicate"),

    /**
     * Larger than max_seen by more than the store's bound on one advance ({@code maxAdvance}, off by default): no
     * issuer hands out such a jump, so the token is taken as forged or corrupted and max_seen stays where it is.
     */
    REJECT_OUT_OF_RANGE(false, "out-of-range"),

    /**
     * The token failed signature verification (unsigned, unknown or retired key, bad signature): refused before any
     * store saw it, so never a result of {@link FenceRule#judge}; see {@link ForgedTokenException}.
     */
    REJECT_FORGED(false, "forged");

    private final boolean accepted;
    private final String outcome;

    Verdict(boolean accepted, String outcome) {
        this.accepted = accepted;
        this.outcome = outcome;
    }

    /** Whether the guarded write may run. */
    public boolean accepted() {
        return accepted;
    }

    /**
     * The counter tag value: {@code accepted}, {@code stale}, {@code duplicate}, {@code out-of-range} or
     * {@code forged}.
     */
    public String outcome() {
        return outcome;
    }
}
