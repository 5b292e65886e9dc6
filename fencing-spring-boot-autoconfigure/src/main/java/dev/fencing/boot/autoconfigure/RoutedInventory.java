package dev.fencing.boot.autoconfigure;

import dev.fencing.recovery.FenceAdmin;
import dev.fencing.recovery.FenceInventory;
import dev.fencing.store.FenceStore;
import dev.fencing.store.RoutingFenceStore;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeSet;

/**
 * The listings of the stores a {@link RoutingFenceStore} routes to, as one: each resource listed by the store its
 * route sends it to (a row another store holds for it, left from an earlier configuration, is not its state), the
 * highest max_seen of them all, and each resource's state read and changed in its route's store. For the startup
 * checks of the issuer's counters, which a routing store otherwise skipped.
 */
final class RoutedInventory implements FenceInventory, FenceAdmin {

    private final RoutingFenceStore routing;
    private final Map<FenceStore, FenceInventory> inventories;

    private RoutedInventory(RoutingFenceStore routing, Map<FenceStore, FenceInventory> inventories) {
        this.routing = routing;
        this.inventories = inventories;
    }

    /**
     * The listing of every store {@code routing} sends resources to, or {@code null} when one of them offers none
     * that can also be administered (its resources could not be judged then).
     */
    static RoutedInventory of(RoutingFenceStore routing) {
        Map<FenceStore, FenceInventory> inventories = new LinkedHashMap<>();
        for (FenceStore store : routing.stores()) {
            FenceInventory inventory = FenceStoreInventory.of(store);
            if (!(inventory instanceof FenceAdmin)) {
                return null;
            }
            inventories.put(store, inventory);
        }
        return new RoutedInventory(routing, inventories);
    }

    @Override
    public List<String> resources(String after, int limit) {
        TreeSet<String> merged = new TreeSet<>();
        inventories.forEach((store, inventory) -> {
            for (String resource : inventory.resources(after, limit)) {
                if (judgedBy(resource) == store) {
                    merged.add(resource);
                }
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

    /** The store whose route covers {@code resource} (a store's family floor row: the family's), or {@code null}. */
    private FenceStore judgedBy(String resource) {
        try {
            return routing.storeFor(resource);
        } catch (IllegalArgumentException unrouted) {
            return null;
        }
    }

    private FenceAdmin admin(String resource) {
        return (FenceAdmin) inventories.get(routing.storeFor(resource));
    }
}
