package dev.fencing.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.noop.NoopCounter;

/**
 * Creates the library's counters, once per resource: {@code fencing.checks} (tags {@code resource}, {@code outcome}
 * = accepted | stale | duplicate | out-of-range | forged | missing | invalid | busy | conflict | error,
 * {@code exception}) and
 * {@code fencing.acquisitions} (tags {@code resource}, {@code outcome} = acquired | failed, {@code exception}). The
 * {@code resource} tag is always the annotation's static name, never a per-entity key. Outcome {@code error} counts
 * checks the store could not decide (the call failed closed). The {@code exception} tag names the simple class of the
 * exception behind an {@code error} or {@code failed} outcome (see {@link FailureCounters}), and is {@value #NONE} on
 * every other outcome. Without a registry every counter is a no-op.
 */
public final class FencingMetrics {

    public static final String CHECKS = "fencing.checks";
    public static final String ACQUISITIONS = "fencing.acquisitions";

    /** The {@code exception} tag of every outcome that is no failure. */
    public static final String NONE = "none";

    private static final FencingMetrics NOOP = new FencingMetrics(null);

    private final MeterRegistry registry;

    /** @param registry where counters are registered; {@code null} for no-op counters */
    public FencingMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Counters that record nothing. */
    public static FencingMetrics noop() {
        return NOOP;
    }

    /** The check counters of {@code resource}, registered now. */
    public CheckCounters checks(String resource) {
        return new CheckCounters(check(resource, "accepted"), check(resource, "stale"), check(resource, "duplicate"),
                check(resource, "missing"), check(resource, "invalid"), check(resource, "busy"),
                check(resource, "conflict"),
                new FailureCounters(exception -> check(resource, "error", exception)),
                check(resource, "out-of-range"), check(resource, "forged"));
    }

    private Counter check(String resource, String outcome) {
        return check(resource, outcome, NONE);
    }

    private Counter check(String resource, String outcome, String exception) {
        return counter(CHECKS, "Fenced calls checked against max_seen, by verdict", resource, outcome, exception);
    }

    /** The acquisition counters of {@code resource}, registered now. */
    public AcquisitionCounters acquisitions(String resource) {
        return new AcquisitionCounters(
                counter(ACQUISITIONS, "Locks acquired for fenced calls, by outcome", resource, "acquired", NONE),
                new FailureCounters(exception -> counter(ACQUISITIONS, "Locks acquired for fenced calls, by outcome",
                        resource, "failed", exception)));
    }

    private Counter counter(String name, String description, String resource, String outcome, String exception) {
        Tags tags = Tags.of("resource", resource, "outcome", outcome, "exception", exception);
        if (registry == null) {
            return new NoopCounter(new Meter.Id(name, tags, null, description, Meter.Type.COUNTER));
        }
        return Counter.builder(name).description(description).tags(tags).register(registry);
    }

    /** Increments {@code counter}; a failing meter never breaks the fenced call. */
    public static void increment(Counter counter) {
        try {
            counter.increment();
        } catch (RuntimeException ignored) {
            // metrics are advisory; the verdict is what matters
        }
    }
}
