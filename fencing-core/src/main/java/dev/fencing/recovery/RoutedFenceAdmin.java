package dev.fencing.recovery;

import dev.fencing.store.FenceStore;
import dev.fencing.store.RoutingFenceStore;
import dev.fencing.store.sql.FenceSql;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The administration of the stores a {@link RoutingFenceStore} routes to, as one store's: each resource listed by the
 * store its route sends it to (a row another store holds for it, left from an earlier configuration, is not its
 * state; a family's floor row goes with the family's route), the highest max_seen of them all, and each resource's
 * state read and changed in its route's store. What the startup checks of the issuer's counters, the floor raise
 * after a restore and the reset of one resource read and change behind a routing store.
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
                    if (judgedBy(resource) == store && found < limit) {
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
        return admin(resource).maxSeen(resource);
    }

    @Override
    public void raiseFloor(String resource, long value) {
        admin(resource).raiseFloor(resource, value);
    }

    @Override
    public long lowerMaxSeen(String resource, long floor) {
        return admin(resource).lowerMaxSeen(resource, floor);
    }

    /** The store whose route covers {@code resource} (a family's floor row: the family's), or {@code null}. */
    private FenceStore judgedBy(String resource) {
        try {
            return routing.storeFor(routed(resource));
        } catch (IllegalArgumentException unrouted) {
            return null;
        }
    }

    /** The resource the routes are matched against: a family's floor row goes where the family's resources go. */
    private static String routed(String resource) {
        String family = FenceSql.familyOfFloorKey(resource);
        return family != null ? family : resource;
    }

    /**
     * @throws IllegalArgumentException naming the routes, when no route (nor a fallback) covers {@code resource}
     */
    private FenceAdmin admin(String resource) {
        return (FenceAdmin) inventories.get(routing.storeFor(routed(resource)));
    }
}
