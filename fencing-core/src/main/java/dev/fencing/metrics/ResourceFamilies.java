package dev.fencing.metrics;

import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Meters (or anything else made once per tag) for resources named at run time, keyed by resource family so that no
 * entity becomes a tag: the resource's part before its first {@code ':'} ({@code accounts:42} is {@code accounts}).
 * Past {@code maxTags} families (names made per entity without a colon, names that came from callers) the rest share
 * {@value #OTHER}. Each tag's value is made once, by the function given; thread-safe. What the lock registries', the
 * ShedLock provider's and the carriers' counters are kept in.
 *
 * @param <T> what is kept per family, such as a {@link io.micrometer.core.instrument.Counter}
 */
public final class ResourceFamilies<T> {

    /** The tag of the families past the bound. */
    public static final String OTHER = "other";

    /** The bound of the acquisition and receipt counters: at most this many {@code resource} tags. */
    public static final int MAX_TAGS = 100;

    private final int maxTags;
    private final Function<String, T> create;
    private final ConcurrentHashMap<String, T> byTag = new ConcurrentHashMap<>();

    /**
     * @param maxTags the most families with a tag of their own
     * @param create  makes the value of a tag (a family, or {@value #OTHER}), once
     */
    public ResourceFamilies(int maxTags, Function<String, T> create) {
        if (maxTags < 1) {
            throw new IllegalArgumentException("maxTags must be at least 1, got " + maxTags);
        }
        this.maxTags = maxTags;
        this.create = Objects.requireNonNull(create, "create");
    }

    /** The value of {@code resource}'s family, made on first use. */
    public T of(String resource) {
        String tag = family(resource);
        T found = byTag.get(tag);
        if (found != null) {
            return found;
        }
        if (byTag.size() >= maxTags) {
            tag = OTHER;
        }
        return byTag.computeIfAbsent(tag, create);
    }

    /** The family of {@code resource}: its part before the first {@code ':'}, or all of it. */
    public static String family(String resource) {
        int colon = resource.indexOf(':');
        return colon > 0 ? resource.substring(0, colon) : resource;
    }
}
