package dev.fencing.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.noop.NoopCounter;

/**
 * Creates the library's counters, once per resource: {@code fencing.checks} (tags {@code resource}, {@code outcome}
 * = accepted | stale | duplicate | out-of-range | forged | missing | invalid | busy | conflict | error,
 * {@code exception}, {@code enforced} = true | false) and
 * {@code fencing.acquisitions} (tags {@code resource}, {@code outcome} = acquired | failed, {@code exception}) and
 * {@code fencing.leases.unchecked} (tag {@code resource}). The
 * {@code resource} tag is always the annotation's static name, never a per-entity key. Outcome {@code error} counts
 * checks the store could not decide (the call failed closed). The {@code exception} tag names the simple class of the
 * exception behind an {@code error} or {@code failed} outcome (see {@link FailureCounters}), and is {@value #NONE} on
 * every other outcome. The {@code enforced} tag is {@code false} on the checks of a resource in observe mode
 * ({@link dev.fencing.mode.FenceMode#OBSERVE}: the verdict was counted and the call ran anyway), {@code true} on every
 * other count. Without a registry every counter is a no-op.
 */
public final class FencingMetrics {

    public static final String CHECKS = "fencing.checks";
    public static final String ACQUISITIONS = "fencing.acquisitions";

    /**
     * Locks of acquiring calls given back, after a call returned, while no check had presented their token (and no
     * carrier had sent it): what those calls wrote was not fenced. One per lock; tag {@code resource}.
     */
    public static final String UNCHECKED_LEASES = "fencing.leases.unchecked";

    /**
     * Tokens a carrier received with a request or message that completed while no check presented them (tags
     * {@code resource}, the family, and {@code carrier}).
     */
    public static final String UNCHECKED_RECEIPTS = "fencing.tokens.received.unchecked";

    /**
     * Requests, messages or scheduler tasks that left fencing scopes open on their pooled thread, closed by the
     * library before the thread ran anything else (tag {@code carrier}: {@code http}, {@code amqp}, {@code reactor}).
     */
    public static final String LEFT_SCOPES = "fencing.scopes.left";

    /** The tag saying whether the counted verdict was enforced ({@code true}) or only observed ({@code false}). */
    public static final String ENFORCED = "enforced";

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

    /** The check counters of {@code resource} for enforced verdicts ({@code enforced=true}), registered now. */
    public CheckCounters checks(String resource) {
        return checks(resource, true);
    }

    /**
     * The check counters of {@code resource}, registered now: {@code enforced=true} for enforced verdicts,
     * {@code false} for verdicts observed and not enforced.
     */
    public CheckCounters checks(String resource, boolean enforced) {
        String tag = Boolean.toString(enforced);
        return new CheckCounters(check(resource, "accepted", tag), check(resource, "stale", tag),
                check(resource, "duplicate", tag), check(resource, "missing", tag), check(resource, "invalid", tag),
                check(resource, "busy", tag), check(resource, "conflict", tag),
                new FailureCounters(exception -> check(resource, "error", exception, tag)),
                check(resource, "out-of-range", tag), check(resource, "forged", tag));
    }

    private Counter check(String resource, String outcome, String enforced) {
        return check(resource, outcome, NONE, enforced);
    }

    private Counter check(String resource, String outcome, String exception, String enforced) {
        return counter(CHECKS, "Fenced calls checked against max_seen, by verdict",
                Tags.of("resource", resource, "outcome", outcome, "exception", exception, ENFORCED, enforced));
    }

    /** The counter of received tokens of {@code resource} no check presented, for {@code carrier}, registered now. */
    public Counter uncheckedReceipts(String resource, String carrier) {
        return counter(UNCHECKED_RECEIPTS, "Tokens received by a request or message that completed with no fenced "
                + "check of them", Tags.of("resource", resource, "carrier", carrier));
    }

    /** The counter of requests, messages or tasks that left scopes open, for {@code carrier}, registered now. */
    public Counter leftScopes(String carrier) {
        return counter(LEFT_SCOPES, "Requests, messages or scheduler tasks that left fencing scopes open on their "
                + "thread, closed by the library", Tags.of("carrier", carrier));
    }

    /** The acquisition counters of {@code resource}, registered now. */
    public AcquisitionCounters acquisitions(String resource) {
        return new AcquisitionCounters(resource,
                counter(ACQUISITIONS, "Locks acquired for fenced calls, by outcome", resource, "acquired", NONE),
                new FailureCounters(exception -> counter(ACQUISITIONS, "Locks acquired for fenced calls, by outcome",
                        resource, "failed", exception)),
                counter(UNCHECKED_LEASES, "Locks of acquiring calls given back with no fenced check of their token",
                        Tags.of("resource", resource)));
    }

    private Counter counter(String name, String description, String resource, String outcome, String exception) {
        return counter(name, description, Tags.of("resource", resource, "outcome", outcome, "exception", exception));
    }

    private Counter counter(String name, String description, Tags tags) {
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
