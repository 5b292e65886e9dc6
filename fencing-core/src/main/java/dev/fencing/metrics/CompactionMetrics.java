package dev.fencing.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.noop.NoopCounter;

/**
 * The counters of fence-state compaction, created once: {@code fencing.compaction.runs} with tag {@code outcome} =
 * ok | failed, and {@code fencing.compaction.folded}, the resources whose state was folded into a family floor, with
 * tag {@code state} = fence (the fence store's) | issuer (the issuer's, such as the JDBC lease table).
 * Never tagged by resource or family. No-ops without a registry.
 */
public final class CompactionMetrics {

    public static final String RUNS = "fencing.compaction.runs";
    public static final String FOLDED = "fencing.compaction.folded";

    private final Counter ok;
    private final Counter failed;
    private final Counter folded;
    private final Counter issuerFolded;

    /** @param registry where to register, or {@code null} for no-op counters */
    public CompactionMetrics(MeterRegistry registry) {
        this.ok = counter(registry, RUNS, Tags.of("outcome", "ok"), "Compaction runs of the fence state, by outcome");
        this.failed = counter(registry, RUNS, Tags.of("outcome", "failed"),
                "Compaction runs of the fence state, by outcome");
        this.folded = counter(registry, FOLDED, Tags.of("state", "fence"),
                "Resources whose state was folded into their family's floor, by where the state was");
        this.issuerFolded = counter(registry, FOLDED, Tags.of("state", "issuer"),
                "Resources whose state was folded into their family's floor, by where the state was");
    }

    /** A run that completed, having folded {@code fence} resources of the store and {@code issuer} of the issuer. */
    public void ok(long fence, long issuer) {
        FencingMetrics.increment(ok);
        add(folded, fence);
        add(issuerFolded, issuer);
    }

    private static void add(Counter counter, long amount) {
        if (amount > 0) {
            try {
                counter.increment(amount);
            } catch (RuntimeException ignored) {
                // a metric never breaks the run it counts
            }
        }
    }

    /** A run that failed. */
    public void failed() {
        failed(0);
    }

    /**
     * Counts a failed run that had folded {@code fence} resources of the store before it failed (its issuer's part
     * failed after the store's committed): they are gone from the store, so they are counted as folded too.
     */
    public void failed(long fence) {
        FencingMetrics.increment(failed);
        add(folded, fence);
    }

    private static Counter counter(MeterRegistry registry, String name, Tags tags, String description) {
        if (registry == null) {
            return new NoopCounter(new Meter.Id(name, tags, null, description, Meter.Type.COUNTER));
        }
        return Counter.builder(name).description(description).tags(tags).register(registry);
    }
}
