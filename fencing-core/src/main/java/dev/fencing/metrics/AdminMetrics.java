package dev.fencing.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.noop.NoopCounter;

/**
 * The counters of administrative resets of max_seen, created once: {@code fencing.admin.resets} with tag
 * {@code outcome} = lowered | refused | raised (a floor raised after a restore). Never tagged by resource (resets name
 * entities). No-ops without a registry.
 */
public final class AdminMetrics {

    public static final String RESETS = "fencing.admin.resets";

    private final Counter lowered;
    private final Counter refused;
    private final Counter raised;

    /** @param registry where to register, or {@code null} for no-op counters */
    public AdminMetrics(MeterRegistry registry) {
        this.lowered = counter(registry, "lowered");
        this.refused = counter(registry, "refused");
        this.raised = counter(registry, "raised");
    }

    public void lowered() {
        FencingMetrics.increment(lowered);
    }

    public void refused() {
        FencingMetrics.increment(refused);
    }

    /** Counts one resource whose max_seen a floor raise after a restore raised. */
    public void raised() {
        FencingMetrics.increment(raised);
    }

    private static Counter counter(MeterRegistry registry, String outcome) {
        Tags tags = Tags.of("outcome", outcome);
        String description = "Administrative resets of a resource's max_seen, by outcome";
        if (registry == null) {
            return new NoopCounter(new Meter.Id(RESETS, tags, null, description, Meter.Type.COUNTER));
        }
        return Counter.builder(RESETS).description(description).tags(tags).register(registry);
    }
}
