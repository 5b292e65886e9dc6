package dev.fencing.web.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The caller's {@value RemoteRefusals#REMOTE_REJECTIONS} counters, tags {@code resource} (the base
 * resource name, as the remote fence's {@code fencing.checks} counts it: the effective resource up to its first
 * {@code :}) and {@code outcome} = stale | duplicate | out-of-range | missing | forged. Each counter is registered on
 * the first rejection of its (resource, outcome) and kept in a map, so a repeated rejection builds nothing; nothing
 * here runs on a call that was not refused. The resource names come from remote answers, so past
 * {@value #MAX_RESOURCES} distinct names further ones share the tag {@value #OTHER}. A failing meter never breaks the
 * call.
 */
final class RemoteRejectionCounters {

    /** How many distinct base resources get their own counters. */
    static final int MAX_RESOURCES = 64;

    /** The {@code resource} tag of base resources past {@link #MAX_RESOURCES}. */
    static final String OTHER = "other";

    private record Key(String resource, String outcome) {
    }

    private final MeterRegistry registry;
    private final ConcurrentHashMap<Key, Counter> counters = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Boolean> resources = new ConcurrentHashMap<>();

    RemoteRejectionCounters(MeterRegistry registry) {
        this.registry = registry;
    }

    /** The base resource of an effective resource: {@code accounts} for {@code accounts:42}. */
    static String baseResource(String effectiveResource) {
        int colon = effectiveResource.indexOf(':');
        return colon < 0 ? effectiveResource : effectiveResource.substring(0, colon);
    }

    /** Counts one rejection of {@code effectiveResource} with {@code outcome}; never throws. */
    void increment(String effectiveResource, String outcome) {
        if (registry == null) {
            return;
        }
        try {
            String resource = baseResource(effectiveResource);
            if (!resources.containsKey(resource)) {
                if (resources.size() >= MAX_RESOURCES) {
                    resource = OTHER;
                } else {
                    resources.putIfAbsent(resource, Boolean.TRUE);
                }
            }
            counters.computeIfAbsent(new Key(resource, outcome), key -> Counter
                    .builder(RemoteRefusals.REMOTE_REJECTIONS)
                    .description("Calls a remote service refused for their fencing token, by verdict")
                    .tag("resource", key.resource()).tag("outcome", key.outcome())
                    .register(registry)).increment();
        } catch (RuntimeException ignored) {
            // metrics are advisory; the rejection is what the caller gets
        }
    }
}
