package dev.fencing.store;

import dev.fencing.token.FencingToken;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * Sends each resource to the store that guards it, when one application fences resources that live in different
 * places (a database table and an in-memory cache, two databases). A route names a resource as written in
 * {@code @Fenced(resource = ...)}; it covers that resource and its keyed forms ({@code accounts} and
 * {@code accounts:42}). When several routes cover a resource the most specific (longest) one wins, whatever the
 * order they were added in: with {@code ledger} and {@code ledger:eu}, {@code ledger:eu:7} goes to {@code ledger:eu}.
 * A resource with no route goes to the fallback, or is refused when there is none.
 */
public final class RoutingFenceStore implements FenceStore {

    private final Map<String, FenceStore> routes;
    /** Each route with its own key, found in one lookup per candidate ({@link #route}). */
    private final Map<String, Map.Entry<String, FenceStore>> entries = new java.util.HashMap<>();
    private final FenceStore fallback;

    private RoutingFenceStore(Map<String, FenceStore> routes, FenceStore fallback) {
        this.routes = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(routes));
        this.routes.forEach((route, store) -> entries.put(route, Map.entry(route, store)));
        this.fallback = fallback;
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
        if (resource == null || write == null) { // before routing: no route is named after a caller's bug
            throw new NullPointerException("RoutingFenceStore.fence: " + (resource == null
                    ? "the resource to fence is null" : "the write for resource '" + resource + "' is null")
                    + " (token " + token + "); nothing was checked");
        }
        return storeFor(resource).fence(resource, token, write);
    }

    /** Whether any of the stores it routes to judges at commit. */
    @Override
    public boolean judgesAtCommit() {
        return stores().stream().anyMatch(FenceStore::judgesAtCommit);
    }

    /**
     * Whether the store {@code resource} routes to judges at commit, or the store of a more specific route under it
     * (its keyed forms: {@code ledger:eu} under {@code ledger}); {@code null}: whether any store it routes to does. A
     * resource with no route and no fallback is refused when fenced, so it judges nothing.
     */
    @Override
    public boolean judgesAtCommit(String resource) {
        if (resource == null) {
            return judgesAtCommit();
        }
        FenceStore store = routedOrNull(resource);
        if (store != null && store.judgesAtCommit(resource)) {
            return true;
        }
        String under = resource + ":";
        for (Map.Entry<String, FenceStore> route : routes.entrySet()) {
            if (route.getKey().startsWith(under) && route.getValue().judgesAtCommit(route.getKey())) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code null} when {@code resource} has a route (or a route of some of its keyed forms, such as
     * {@code ledger:eu} for {@code ledger}) whose store guards it, or there is a fallback; else why not, naming the
     * routes.
     */
    @Override
    public String unguarded(String resource) {
        FenceStore store = routedOrNull(resource);
        if (store != null) {
            return store.unguarded(resource);
        }
        String under = resource + ":";
        for (String route : routes.keySet()) {
            if (route.startsWith(under)) {
                return null; // some keys have a route; the others are refused when fenced
            }
        }
        return unrouted(resource);
    }

    private String unrouted(String resource) {
        return "No fence store is routed for resource '" + resource + "' and there is no fallback; routes: "
                + routes.keySet() + " (add a route for it, or its @Fenced resource, or a fallback)";
    }

    /**
     * Verifies every routed store and the fallback, each once, and fails with every problem found (two databases
     * missing their tables are both named at once, not one per start).
     */
    @Override
    public void verify() {
        List<RuntimeException> failures = new java.util.ArrayList<>();
        for (FenceStore store : stores()) {
            try {
                store.verify();
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        if (failures.size() == 1) {
            throw failures.get(0);
        }
        if (!failures.isEmpty()) {
            StringBuilder text = new StringBuilder("The stores of " + failures.size() + " routes failed to verify:");
            failures.forEach(e -> text.append("\n  - ").append(e.getMessage()));
            dev.fencing.FencingConfigurationException all = new dev.fencing.FencingConfigurationException(
                    text.toString());
            failures.forEach(all::addSuppressed);
            throw all;
        }
    }

    /**
     * Every store it routes to and the fallback, each once: for checks that must see each store of an application
     * (the starter's startup checks), not for fencing.
     */
    public List<FenceStore> stores() {
        return Stream.concat(routes.values().stream(), Stream.ofNullable(fallback)).distinct().toList();
    }

    /** Its routes, each resource as routed with its store, in the order they were added. */
    public Map<String, FenceStore> routes() {
        return routes;
    }

    /** The store of resources no route covers, or {@code null} when there is none (they are refused). */
    public FenceStore fallback() {
        return fallback;
    }

    /** The store that guards {@code resource}. */
    public FenceStore storeFor(String resource) {
        FenceStore store = routedOrNull(resource);
        if (store == null) {
            throw new IllegalArgumentException(unrouted(resource));
        }
        return store;
    }

    /**
     * The route that covers {@code resource}: the most specific one of {@link #routes()} (the whole resource, then
     * each shorter {@code ':'}-prefix), or {@code null} when none does (the fallback's, if there is one).
     */
    public String routeOf(String resource) {
        Map.Entry<String, FenceStore> route = route(resource);
        return route == null ? null : route.getKey();
    }

    /** The store of the most specific route covering {@code resource}, else the fallback, else {@code null}. */
    private FenceStore routedOrNull(String resource) {
        Map.Entry<String, FenceStore> route = route(resource);
        return route == null ? fallback : route.getValue();
    }

    /** The most specific route covering {@code resource}: the whole resource, then each shorter ':'-prefix. */
    private Map.Entry<String, FenceStore> route(String resource) {
        Map.Entry<String, FenceStore> route = entries.get(resource);
        int colon = resource.lastIndexOf(':');
        while (route == null && colon > 0) {
            route = entries.get(resource.substring(0, colon));
            colon = resource.lastIndexOf(':', colon - 1);
        }
        return route;
    }

    /** Collects routes; each resource once. */
    public static final class Builder {
        private final Map<String, FenceStore> routes = new LinkedHashMap<>();
        private FenceStore fallback;

        public Builder route(String resource, FenceStore store) {
            if (resource == null || resource.isBlank()) {
                throw new IllegalArgumentException("route resource must not be blank");
            }
            if (routes.putIfAbsent(resource, Objects.requireNonNull(store, "store")) != null) {
                throw new IllegalArgumentException("resource '" + resource + "' is routed twice");
            }
            return this;
        }

        public Builder fallback(FenceStore store) {
            this.fallback = Objects.requireNonNull(store, "store");
            return this;
        }

        public RoutingFenceStore build() {
            return new RoutingFenceStore(routes, fallback);
        }
    }
}
