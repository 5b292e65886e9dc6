package dev.fencing.metrics;

import dev.fencing.rule.Verdict;
import dev.fencing.store.TransientFenceFailure;
import io.micrometer.core.instrument.Counter;

/**
 * The {@code fencing.checks} counters of one resource, one per outcome, created once and reused on every call: either
 * its enforced verdicts ({@code enforced=true}) or its observed ones ({@code enforced=false}, observe mode).
 * {@code invalid}: the key or resource could not name an entity (the call was refused before any check);
 * {@code busy}: the store timed out waiting for the resource's fence lock; {@code conflict}: the database aborted the
 * check as a serialization failure or deadlock (retryable); {@code out-of-range}: the token was further above
 * max_seen than the store's {@code maxAdvance}; {@code forged}: the token failed signature verification and never
 * reached the store; {@code error}: the store could not decide, one counter per
 * {@code exception} tag (see {@link FailureCounters}); every other outcome has {@code exception=none}.
 */
public record CheckCounters(Counter accepted, Counter stale, Counter duplicate, Counter missing, Counter invalid,
                            Counter busy, Counter conflict, FailureCounters error, Counter outOfRange,
                            Counter forged) {

    /** The counter for a rejecting verdict. */
    public Counter rejected(Verdict verdict) {
        return switch (verdict) {
            case REJECT_DUPLICATE -> duplicate;
            case REJECT_OUT_OF_RANGE -> outOfRange;
            case REJECT_FORGED -> forged;
            default -> stale;
        };
    }

    /** The counter for a transient store failure. */
    public Counter failed(TransientFenceFailure.Reason reason) {
        return reason == TransientFenceFailure.Reason.BUSY ? busy : conflict;
    }
}
