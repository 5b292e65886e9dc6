package dev.fencing.metrics;

import dev.fencing.rule.Verdict;
import io.micrometer.core.instrument.Counter;

/**
 * The {@code fencing.checks} counters of one resource, one per outcome, created once and reused on every call.
 */
public record CheckCounters(Counter accepted, Counter stale, Counter duplicate, Counter missing, Counter error) {

    /** The counter for a rejecting verdict. */
    public Counter rejected(Verdict verdict) {
        return verdict == Verdict.REJECT_DUPLICATE ? duplicate : stale;
    }
}
