package dev.fencing.recovery;

import dev.fencing.retention.ResourceFamily;
import dev.fencing.store.FenceStore;
import dev.fencing.store.RoutingFenceStore;
import dev.fencing.store.sql.FenceSql;
import dev.fencing.token.FencingToken;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The administration of the stores a {@link RoutingFenceStore} routes to, as one store's: each resource listed by the
 * store its route sends it to (a row another store holds for it, left from an earlier configuration, is not its state),
 * the highest max_seen of them all, and each resource's state read and changed in its route's store. A family's floor
 * row belongs to every store that judges a key of the family (the family's route or the fallback, and the route of each
 * of its keys that has one, {@code reg:eu} for the family {@code reg}): a floor is raised in each of them, read as the
 * lowest of them (none while one of them has none), and lowered in each that has one. What the startup checks of the
 * issuer's counters, the floor raise after a restore and the reset of one resource read and change behind a routing
 * store.
 */
public final class RoutedFenceAdmin implements FenceInventory, FenceAdmin {

    private final RoutingFenceStore routing;
    private final Map<FenceStore, FenceInventory> inventories;

    private RoutedFenceAdmin(RoutingFenceStore routing, Map<FenceStore, FenceInventory> inventories) {
        this.routing = routing;
        this.inventories = inventories;
    }

    /**
     * The administration of every store {@code routing} sends resources to, each found by {@code administration}
     * (for a JDBC store, its {@code JdbcFenceAdmin}; a store that administers itself, itself), or {@code null} when
     * one of them has none that is both a {@link FenceInventory} and a {@link FenceAdmin}.
     *
     * @param administration a store's listing and administration in one object, or {@code null} when it has none
     */
    public static RoutedFenceAdmin of(RoutingFenceStore routing, Function<FenceStore, ?> administration) {
        Map<FenceStore, FenceInventory> inventories = new LinkedHashMap<>();
        for (FenceStore store : routing.stores()) {
            Object admin = store instanceof RoutingFenceStore nested ? of(nested, administration)
                    : administration.apply(store);
            if (!(admin instanceof FenceInventory inventory) || !(admin instanceof FenceAdmin)) {
                return null;
            }
            inventories.put(store, inventory);
        }
        return new RoutedFenceAdmin(routing, inventories);
    }

    @Override
    public List<String> resources(String after, int limit) {
        TreeSet<String> merged = new TreeSet<>();
        inventories.forEach((store, inventory) -> {
            // each store's first 'limit' resources of its own routes: rows it holds for other routes are skipped,
            // page after page, so that a short page still means the end
            int found = 0;
            String cursor = after;
            while (found < limit) {
                List<String> page = inventory.resources(cursor, limit);
                for (String resource : page) {
                    if (judges(store, resource) && found < limit) {
                        merged.add(resource);
                        found++;
                    }
                }
                if (page.size() < limit) {
                    break;
                }
                cursor = page.get(page.size() - 1);
            }
        });
        List<String> page = new ArrayList<>(limit);
        for (String resource : merged) {
            if (page.size() == limit) {
                break;
            }
            page.add(resource);
        }
        return page;
    }

    @Override
    public OptionalLong highestMaxSeen() {
        OptionalLong highest = OptionalLong.empty();
        for (FenceInventory inventory : inventories.values()) {
            OptionalLong value = inventory.highestMaxSeen();
            if (value.isPresent() && (highest.isEmpty() || value.getAsLong() > highest.getAsLong())) {
                highest = value;
            }
        }
        return highest;
    }

    @Override
    public OptionalLong maxSeen(String resource) {
        String family = FenceSql.familyOfFloorKey(resource);
        if (family == null) {
            return admin(resource).maxSeen(resource);
        }
        // the weakest of them: a floor raise that finds it below its target raises it in every store
        long lowest = Long.MAX_VALUE;
        for (FenceStore store : familyStores(family)) {
            OptionalLong value = admin(store).maxSeen(resource);
            if (value.isEmpty()) {
                return value;
            }
            lowest = Math.min(lowest, value.getAsLong());
        }
        return OptionalLong.of(lowest);
    }

    @Override
    public void raiseFloor(String resource, long value) {
        String family = FenceSql.familyOfFloorKey(resource);
        if (family == null) {
            admin(resource).raiseFloor(resource, value);
            return;
        }
        for (FenceStore store : familyStores(family)) {
            admin(store).raiseFloor(resource, value);
        }
    }

    /**
     * {@inheritDoc} A family's floor is lowered in each store that judges a key of the family and has a floor for it;
     * refused, before any changes, when one of them has a floor below {@code floor}. Returns the highest floor before.
     */
    /**
     * {@inheritDoc} In the resource's route's store; a family's floor key, which spans stores, is lowered with
     * {@link #lowerMaxSeen(String, long)} only.
     */
    @Override
    public long lowerMaxSeen(String resource, long floor, long expected) {
        if (FenceSql.familyOfFloorKey(resource) != null) {
            throw new IllegalArgumentException("'" + FencingToken.printable(resource) + "' is a family's floor key, "
                    + "kept in every store that judges a key of the family: lower it with lowerMaxSeen(key, floor)");
        }
        return admin(resource).lowerMaxSeen(resource, floor, expected);
    }

    @Override
    public long lowerMaxSeen(String resource, long floor) {
        String family = FenceSql.familyOfFloorKey(resource);
        if (family == null) {
            return admin(resource).lowerMaxSeen(resource, floor);
        }
        FenceAdmin.checkLowering(resource, floor);
        Map<FenceStore, Long> floors = new LinkedHashMap<>();
        for (FenceStore store : familyStores(family)) {
            OptionalLong value = admin(store).maxSeen(resource);
            if (value.isPresent()) {
                if (floor > value.getAsLong()) {
                    throw FenceAdmin.notLowering(resource, floor, value.getAsLong());
                }
                floors.put(store, value.getAsLong());
            }
        }
        if (floors.isEmpty()) {
            throw FenceAdmin.unknownResource(resource);
        }
        long previous = 0;
        for (FenceStore store : floors.keySet()) {
            previous = Math.max(previous, admin(store).lowerMaxSeen(resource, floor));
        }
        return previous;
    }

    /** Whether {@code store} judges {@code resource}: its route's store, or for a family's floor, one of its stores. */
    private boolean judges(FenceStore store, String resource) {
        String family = FenceSql.familyOfFloorKey(resource);
        try {
            return family == null ? routing.storeFor(resource) == store : familyStores(family).contains(store);
        } catch (IllegalArgumentException unrouted) {
            return false;
        }
    }

    /**
     * The stores that judge a key of {@code family}: the family's route's (or the fallback), and the store of each
     * route of one of its keys.
     *
     * @throws IllegalArgumentException naming the routes, when none covers the family or a key of it
     */
    private Set<FenceStore> familyStores(String family) {
        Set<FenceStore> stores = new LinkedHashSet<>();
        try {
            stores.add(routing.storeFor(family));
        } catch (IllegalArgumentException unrouted) {
            // only keys of the family may have routes of their own
        }
        routing.routes().forEach((route, store) -> {
            if (family.equals(ResourceFamily.of(route))) {
                stores.add(store);
            }
        });
        if (stores.isEmpty()) {
            routing.storeFor(family); // throws, naming the routes
        }
        return stores;
    }

    /**
     * @throws IllegalArgumentException naming the routes, when no route (nor a fallback) covers {@code resource}
     */
    private FenceAdmin admin(String resource) {
        return admin(routing.storeFor(resource));
    }

    private FenceAdmin admin(FenceStore store) {
        return (FenceAdmin) inventories.get(store);
    }
}
