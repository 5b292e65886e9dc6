package dev.fencing.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.noop.NoopCounter;

/**
 * A token issuer's own counters, created once: {@code fencing.issuer.acquisitions} (tags {@code issuer},
 * {@code outcome} = acquired | failed | cancelled, {@code exception}: the simple class name of the exception behind a
 * {@code failed} acquire, see {@link FailureCounters}, {@code none} for the others; {@code cancelled}: the acquiring
 * thread was interrupted, its caller gave up, the lock service did not fail) and
 * {@code fencing.issuer.leases.lost} (tag {@code issuer}): leases the lock service stopped honouring while they were
 * held (session lost, lease expired). Tagged by issuer kind only, never by resource. No-ops without a registry.
 */
public final class IssuerMetrics {

    public static final String ACQUISITIONS = "fencing.issuer.acquisitions";
    public static final String LOST = "fencing.issuer.leases.lost";

    private final Counter acquired;
    private final FailureCounters failed;
    private final Counter cancelled;
    private final Counter lost;

    /**
     * @param registry where to register, or {@code null} for no-op counters
     * @param issuer   the issuer kind for the {@code issuer} tag, e.g. {@code zookeeper}
     */
    public IssuerMetrics(MeterRegistry registry, String issuer) {
        this.acquired = counter(registry, ACQUISITIONS, "Locks acquired from the lock service, by outcome",
                Tags.of("issuer", issuer, "outcome", "acquired", "exception", FencingMetrics.NONE));
        this.failed = new FailureCounters(exception -> counter(registry, ACQUISITIONS,
                "Locks acquired from the lock service, by outcome",
                Tags.of("issuer", issuer, "outcome", "failed", "exception", exception)));
        this.cancelled = counter(registry, ACQUISITIONS, "Locks acquired from the lock service, by outcome",
                Tags.of("issuer", issuer, "outcome", "cancelled", "exception", FencingMetrics.NONE));
        this.lost = counter(registry, LOST, "Leases lost while held", Tags.of("issuer", issuer));
    }

    public void acquired() {
        FencingMetrics.increment(acquired);
    }

    /** Counts a failed acquire, tagged with the exception behind {@code failure}. */
    public void failed(Throwable failure) {
        failed.increment(failure);
    }

    /** Counts an acquire its caller gave up on (an interrupt: a reactive subscriber gone, an executor shut down). */
    public void cancelled() {
        FencingMetrics.increment(cancelled);
    }

    public void lost() {
        FencingMetrics.increment(lost);
    }

    private static Counter counter(MeterRegistry registry, String name, String description, Tags tags) {
        if (registry == null) {
            return new NoopCounter(new Meter.Id(name, tags, null, description, Meter.Type.COUNTER));
        }
        return Counter.builder(name).description(description).tags(tags).register(registry);
    }
}
