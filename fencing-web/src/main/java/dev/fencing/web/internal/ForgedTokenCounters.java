package dev.fencing.web.internal;

import dev.fencing.metrics.FencingMetrics;
import dev.fencing.metrics.ResourceFamilies;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The {@code fencing.checks} counters with {@code outcome=forged} that the {@code Fencing-Token} header filters
 * (servlet and WebFlux) increment for the tokens they refuse, tagged with the token's base resource (up to its first
 * {@code :}), as the guard tags its own. The resource names come from the request, so past {@value #MAX_RESOURCES}
 * distinct names further ones share the tag {@value ResourceFamilies#OTHER}. Without a registry nothing is counted; a
 * failing meter never breaks the answer. Internal to fencing-web, not an API for applications.
 */
public final class ForgedTokenCounters {

    /** How many distinct base resources get their own counter. */
    static final int MAX_RESOURCES = 64;

    public static final ForgedTokenCounters NONE = new ForgedTokenCounters(null);

    /** The forged counter of each base resource; {@code null} without a registry. */
    private final ResourceFamilies<Counter> counters;

    public ForgedTokenCounters(MeterRegistry registry) {
        FencingMetrics metrics = registry == null ? null : new FencingMetrics(registry);
        this.counters = metrics == null ? null
                : new ResourceFamilies<>(MAX_RESOURCES, name -> metrics.checks(name).forged());
    }

    /** Counts one forged token presented for {@code effectiveResource}; never throws. */
    public void increment(String effectiveResource) {
        if (counters == null) {
            return;
        }
        try {
            FencingMetrics.increment(counters.of(effectiveResource));
        } catch (RuntimeException ignored) {
            // metrics are advisory; the refusal is what the caller gets
        }
    }
}
