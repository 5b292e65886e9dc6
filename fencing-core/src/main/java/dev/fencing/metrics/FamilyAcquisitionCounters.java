package dev.fencing.metrics;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@code fencing.acquisitions} and {@code fencing.leases.unchecked} counters of locks whose resources are named at
 * run time (ShedLock's lock names, a lock registry's keys), tagged by family so that no entity becomes a tag: the
 * resource's part before its first {@code ':'} ({@code accounts:42} counts under {@code accounts}); past
 * {@value #MAX_TAGS} families (names made per entity without a colon), under {@code other}. Each family's counters are
 * registered once; thread-safe.
 */
public final class FamilyAcquisitionCounters {

    /** Most {@code resource} tags; further families share {@value #OTHER}. */
    public static final int MAX_TAGS = 100;

    /** The tag of the families past {@link #MAX_TAGS}. */
    public static final String OTHER = "other";

    private final FencingMetrics metrics;
    private final ConcurrentHashMap<String, AcquisitionCounters> byTag = new ConcurrentHashMap<>();

    /** Counters registered with {@code metrics} ({@link FencingMetrics#noop()} for none). */
    public FamilyAcquisitionCounters(FencingMetrics metrics) {
        this.metrics = java.util.Objects.requireNonNull(metrics, "metrics");
    }

    /** The counters of {@code resource}'s family. */
    public AcquisitionCounters of(String resource) {
        String tag = family(resource);
        AcquisitionCounters counters = byTag.get(tag);
        if (counters != null) {
            return counters;
        }
        if (byTag.size() >= MAX_TAGS) {
            tag = OTHER;
        }
        return byTag.computeIfAbsent(tag, metrics::acquisitions);
    }

    /** The family of {@code resource}: its part before the first {@code ':'}, or all of it. */
    public static String family(String resource) {
        int colon = resource.indexOf(':');
        return colon > 0 ? resource.substring(0, colon) : resource;
    }
}
