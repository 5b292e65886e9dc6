package dev.fencing.web.internal;

import dev.fencing.metrics.FencingMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@code fencing.checks} counters with {@code outcome=forged} that the {@code Fencing-Token} header filters (servlet and WebFlux) increment for the
 * tokens it refuses, tagged with the token's base resource (up to its first {@code :}), as the guard tags its own.
 * The resource names come from the request, so past {@value #MAX_RESOURCES} distinct names further ones share the
 * tag {@value #OTHER}. Without a registry nothing is counted; a failing meter never breaks the answer. Internal to
 * fencing-web, not an API for applications.
 */
public final class ForgedTokenCounters {

    /** How many distinct base resources get their own counter. */
    static final int MAX_RESOURCES = 64;

    /** The {@code resource} tag of base resources past {@link #MAX_RESOURCES}. */
    static final String OTHER = "other";

    public static final ForgedTokenCounters NONE = new ForgedTokenCounters(null);

    private final FencingMetrics metrics;
    private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();

    public ForgedTokenCounters(MeterRegistry registry) {
        this.metrics = registry == null ? null : new FencingMetrics(registry);
    }

    /** Counts one forged token presented for {@code effectiveResource}; never throws. */
    public void increment(String effectiveResource) {
        if (metrics == null) {
            return;
        }
        try {
            String resource = RemoteRejectionCounters.baseResource(effectiveResource);
            Counter counter = counters.get(resource);
            if (counter == null) {
                String tag = counters.size() >= MAX_RESOURCES ? OTHER : resource;
                counter = counters.computeIfAbsent(tag, name -> metrics.checks(name).forged());
            }
            FencingMetrics.increment(counter);
        } catch (RuntimeException ignored) {
            // metrics are advisory; the refusal is what the caller gets
        }
    }
}
