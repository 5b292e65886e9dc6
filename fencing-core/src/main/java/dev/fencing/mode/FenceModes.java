package dev.fencing.mode;

import dev.fencing.FencingConfigurationException;
import dev.fencing.metrics.ResourceFamilies;
import dev.fencing.token.FencingToken;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The {@link FenceMode} of each declared resource ({@code @Fenced(resource = ...)}, never a per-entity key) plus a
 * default for every other one, switchable at runtime: an immutable snapshot behind a volatile field, so a check reads
 * its mode with one volatile read and nothing is allocated per call. Every switch is logged at WARNING with who asked.
 * A fence that cannot let a refused call through (a store that judges at commit, a reactive point) registers a
 * refusal: observing what it fences then fails, at startup ({@link #validate()}) and at runtime ({@link #set}).
 * Thread-safe.
 */
public final class FenceModes {

    private static final System.Logger LOG = System.getLogger(FenceModes.class.getName());

    /** What every resource is set to when no mode is configured: enforce everywhere. */
    public static FenceModes enforcing() {
        return new FenceModes(FenceMode.ENFORCE, Map.of());
    }

    private volatile Snapshot snapshot;
    /** The resources {@code @Fenced} methods declare, once known ({@link #declare}); {@code null} before. */
    private java.util.Set<String> declared;
    /** Those of them that methods fence per key ({@code accounts} of {@code accounts:42}); empty before. */
    private java.util.Set<String> keyed = java.util.Set.of();

    /** Why a resource (key {@code null}: every resource) cannot be observed; guarded by {@code this}. */
    private final Map<String, String> refusals = new LinkedHashMap<>();
    /** Refusals that depend on the resource ({@link #refuseObserveWhere}); guarded by {@code this}. */
    private final Map<Predicate<String>, String> conditionalRefusals = new LinkedHashMap<>();
    private final ObservedCalls observed = new ObservedCalls();

    /**
     * @param defaultMode the mode of every resource without one of its own
     * @param resources   modes per declared resource
     * @throws FencingConfigurationException when a resource name is blank or a mode is {@code null}
     */
    public FenceModes(FenceMode defaultMode, Map<String, FenceMode> resources) {
        this.snapshot = Snapshot.of(Objects.requireNonNull(defaultMode, "defaultMode"), check(resources));
    }

    private static Map<String, FenceMode> check(Map<String, FenceMode> resources) {
        Map<String, FenceMode> copy = new TreeMap<>();
        resources.forEach((resource, mode) -> {
            if (resource == null || resource.isBlank()) {
                throw new FencingConfigurationException("A fence mode was given for a blank resource name ("
                        + resources + "); name the resource as in @Fenced(resource = ...)");
            }
            if (mode == null) {
                throw new FencingConfigurationException("No fence mode given for resource '" + resource + "'");
            }
            copy.put(resource, mode);
        });
        return copy;
    }

    /** Whether checks of {@code resource} are observed, not enforced: one volatile read, no allocation. */
    public boolean observes(String resource) {
        return snapshot.observes(resource);
    }

    /**
     * Whether checks of the declared resource a token's {@code effective} resource belongs to are observed: for a
     * carrier, which sees the token before any fenced method and must judge it as that method's fence will. The
     * declared resource is {@code effective} itself when a method declares it, else the longest declared prefix
     * before one of its colons ({@code orders:eu} for {@code orders:eu:7} when {@code orders:eu} is declared), else,
     * before the declared resources are known or when none matches, the text before its first colon.
     */
    public boolean observesResourceOf(String effective) {
        java.util.Set<String> known = declared();
        String resource;
        if (known.contains(effective)) {
            resource = effective;
        } else {
            String entityOf = entityOf(effective, known);
            resource = entityOf != null ? entityOf : ResourceFamilies.family(effective);
        }
        return snapshot.observes(resource);
    }

    /** The mode of {@code resource} now. */
    public FenceMode mode(String resource) {
        return snapshot.observes(resource) ? FenceMode.OBSERVE : FenceMode.ENFORCE;
    }

    /** The mode of resources without one of their own. */
    public FenceMode defaultMode() {
        return snapshot.defaultMode;
    }

    /** The modes set per resource (sorted by resource; an immutable copy). */
    public Map<String, FenceMode> resources() {
        return snapshot.resources;
    }

    /** The record of observed calls (which methods ran without a token, or would have been refused). */
    public ObservedCalls observed() {
        return observed;
    }

    /** The resources {@code @Fenced} methods declare (sorted), empty before they are known. */
    public synchronized java.util.Set<String> declared() {
        return declared == null ? java.util.Set.of() : declared;
    }

    /** The declared resources that methods fence per key, each a family of keys (sorted), empty before known. */
    public synchronized java.util.Set<String> keyed() {
        return keyed;
    }

    /**
     * Sets the mode of {@code resource} ({@code null}: the default of every resource without its own), logged at
     * WARNING naming {@code who}.
     *
     * @throws FencingConfigurationException when {@code mode} is OBSERVE and the fence of that resource cannot let a
     *                                       refused call through (nothing changes then), or an argument is blank
     */
    public synchronized void set(String resource, FenceMode mode, String who) {
        Objects.requireNonNull(mode, "mode");
        if (resource != null && resource.isBlank()) {
            throw new FencingConfigurationException("Cannot set the fence mode of a blank resource name (asked by "
                    + who + "); name the resource as in @Fenced(resource = ...), or none for the default");
        }
        if (resource != null && declared != null && !declared.contains(resource)) {
            throw new FencingConfigurationException("Cannot set the fence mode of resource '"
                    + FencingToken.printable(resource) + "' (asked by " + who + "): " + undeclared(resource, declared)
                    + "; the mode is unchanged");
        }
        Snapshot current = snapshot;
        Snapshot next;
        if (resource == null) {
            next = Snapshot.of(mode, current.resources);
        } else {
            Map<String, FenceMode> resources = new TreeMap<>(current.resources);
            resources.put(resource, mode);
            next = Snapshot.of(current.defaultMode, resources);
        }
        String refused = refusal(next);
        if (refused != null) {
            throw new FencingConfigurationException("Cannot switch " + (resource == null ? "the default fence mode"
                    : "the fence mode of resource '" + resource + "'") + " to " + mode.value() + " (asked by " + who
                    + "): " + refused + "; the mode is unchanged");
        }
        snapshot = next;
        LOG.log(System.Logger.Level.WARNING, "Fence mode of {0} switched to {1} by {2} (default {3}, per resource {4})",
                resource == null ? "every resource without its own mode" : "resource '" + resource + "'",
                mode.value(), who, next.defaultMode.value(), next.resources);
    }

    /**
     * Records that the fence of {@code resource} ({@code null}: of every resource) cannot be observed, and why; a mode
     * set later that observes it is refused with {@code reason}.
     */
    public synchronized void refuseObserve(String resource, String reason) {
        refusals.merge(resource, Objects.requireNonNull(reason, "reason"), (a, b) -> a);
    }

    /**
     * Records that the fences of the resources {@code cannotObserve} accepts cannot be observed, and why: a mode set
     * later that observes one of them is refused with {@code reason}. The predicate is asked for each resource with a
     * mode of its own that observes, and with {@code null} when the default observes (for whichever resource has no
     * mode of its own): a store routing resources to stores of different kinds ({@code RoutingFenceStore}).
     */
    public synchronized void refuseObserveWhere(Predicate<String> cannotObserve, String reason) {
        conditionalRefusals.put(Objects.requireNonNull(cannotObserve, "cannotObserve"),
                Objects.requireNonNull(reason, "reason"));
    }

    /**
     * Records every resource a {@code @Fenced} method declares, once all are known (at startup, where every fenced
     * method is a bean's): from then on a mode for another resource is refused, since a misspelt name would leave
     * the resource meant in its old mode. Returns the configured resources that no method declares, for the startup
     * check to report.
     */
    public synchronized java.util.Set<String> declare(java.util.Set<String> resources) {
        return declare(resources, java.util.Set.of());
    }

    /**
     * {@link #declare(java.util.Set)}, also recording which of them are fenced per key: families whose keys the
     * floor raise after a restore covers with a family floor.
     */
    public synchronized java.util.Set<String> declare(java.util.Set<String> resources, java.util.Set<String> perKey) {
        keyed = java.util.Collections.unmodifiableSet(new java.util.TreeSet<>(perKey));
        declared = java.util.Collections.unmodifiableSet(new java.util.TreeSet<>(resources));
        java.util.Set<String> unknown = new java.util.TreeSet<>(snapshot.resources.keySet());
        unknown.removeAll(declared);
        return unknown;
    }

    /**
     * Why a mode cannot name {@code resource}, which is not among {@code declared}: an entity of a declared resource
     * ({@code accounts:42}) has no mode of its own; any other name is declared by no {@code @Fenced} method.
     */
    public static String undeclared(String resource, java.util.Set<String> declared) {
        String base = entityOf(resource, declared);
        if (base != null) {
            return "it names one entity of resource '" + base + "' (@Fenced(key = ...)), and a mode applies to a "
                    + "whole resource, never to one entity: set the mode of '" + base + "'";
        }
        return "no @Fenced method declares it (declared: " + declared + ")";
    }

    /**
     * The declared resource whose entity {@code resource} names ({@code accounts} for {@code accounts:42}), or null.
     */
    public static String entityOf(String resource, java.util.Set<String> declared) {
        for (int colon = resource.lastIndexOf(':'); colon > 0; colon = resource.lastIndexOf(':', colon - 1)) {
            if (declared.contains(resource.substring(0, colon))) {
                return resource.substring(0, colon);
            }
        }
        return null;
    }

    /**
     * Adds {@code resource} to the declared ones, once {@link #declare} has run: a fence built after startup (a woven
     * class that is not a bean, first called now) makes its resource's mode settable. No effect before.
     */
    public synchronized void declareAlso(String resource) {
        if (declared != null && !declared.contains(resource)) {
            java.util.Set<String> more = new java.util.TreeSet<>(declared);
            more.add(resource);
            declared = java.util.Collections.unmodifiableSet(more);
        }
    }

    /**
     * Checks the current modes against the refusals: called once every fence is known, at startup.
     *
     * @throws FencingConfigurationException naming the resource that is observed and why it cannot be
     */
    public synchronized void validate() {
        String refused = refusal(snapshot);
        if (refused != null) {
            throw new FencingConfigurationException("Observe mode is configured where it cannot work: " + refused
                    + "; set it to enforce (the starter: fencing.mode=enforce or fencing.modes.<resource>=enforce; "
                    + "@EnableFencing: defaultFenceMode = ENFORCE, the resource removed from observe)");
        }
    }

    private String refusal(Snapshot modes) {
        for (Map.Entry<String, String> refusal : refusals.entrySet()) {
            String resource = refusal.getKey();
            if (resource == null ? modes.anyObserved : modes.observes(resource)) {
                return (resource == null ? modes.observedText() : "resource '" + resource + "'") + ": "
                        + refusal.getValue();
            }
        }
        for (Map.Entry<Predicate<String>, String> refusal : conditionalRefusals.entrySet()) {
            if (modes.observeByDefault && refusal.getKey().test(null)) {
                return "observe mode as the default of every resource: " + refusal.getValue();
            }
            for (Map.Entry<String, FenceMode> own : modes.resources.entrySet()) {
                if (own.getValue() == FenceMode.OBSERVE && refusal.getKey().test(own.getKey())) {
                    return "resource '" + own.getKey() + "': " + refusal.getValue();
                }
            }
        }
        return null;
    }

    @Override
    public String toString() {
        Snapshot current = snapshot;
        return "FenceModes[default=" + current.defaultMode.value() + ", resources=" + current.resources + "]";
    }

    /** One immutable state of the modes. */
    private static final class Snapshot {
        final FenceMode defaultMode;
        final Map<String, FenceMode> resources;
        /** The same modes in a hash map, for the lookup of each check. */
        private final Map<String, FenceMode> lookup;
        /** Whether any resource observes: when not, {@link #observes} answers without a lookup. */
        final boolean anyObserved;
        final boolean observeByDefault;

        private Snapshot(FenceMode defaultMode, Map<String, FenceMode> resources) {
            this.defaultMode = defaultMode;
            this.resources = resources;
            this.lookup = Map.copyOf(resources);
            this.observeByDefault = defaultMode == FenceMode.OBSERVE;
            this.anyObserved = observeByDefault || resources.containsValue(FenceMode.OBSERVE);
        }

        static Snapshot of(FenceMode defaultMode, Map<String, FenceMode> resources) {
            return new Snapshot(defaultMode, Collections.unmodifiableMap(new TreeMap<>(resources)));
        }

        /** Which resources observe, for messages. */
        String observedText() {
            String named = resources.entrySet().stream().filter(e -> e.getValue() == FenceMode.OBSERVE)
                    .map(e -> "resource '" + e.getKey() + "'").collect(java.util.stream.Collectors.joining(", "));
            if (observeByDefault) {
                return named.isEmpty() ? "observe mode as the default of every resource"
                        : "observe mode as the default of every resource, and " + named;
            }
            return named;
        }

        boolean observes(String resource) {
            if (!anyObserved) {
                return false;
            }
            FenceMode own = lookup.get(resource);
            return own == null ? observeByDefault : own == FenceMode.OBSERVE;
        }
    }
}
