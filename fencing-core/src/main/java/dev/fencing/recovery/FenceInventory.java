package dev.fencing.recovery;

import java.util.List;
import java.util.OptionalLong;

/**
 * What a fence store holds, listed for operations that touch every resource: the resources with a max_seen, page by
 * page in a stable order, the highest max_seen of all, and one resource's. A read, never a write; pages taken while
 * writes continue may miss a resource created meanwhile (its first token came from the issuer as it is now).
 */
public interface FenceInventory {

    /**
     * Up to {@code limit} resources with a max_seen, in the store's order of resource names, each after
     * {@code after} ({@code null}: from the first).
     *
     * @throws IllegalArgumentException when {@code limit} is not positive
     */
    List<String> resources(String after, int limit);

    /** The highest max_seen of every resource in the store, empty when it holds none. */
    OptionalLong highestMaxSeen();

    /**
     * The committed max_seen of {@code resource} (a family's floor key included), empty when the store holds none for
     * it: what startup checks compare an issuer's counters with, store by store.
     */
    OptionalLong maxSeen(String resource);

    /** The argument check of {@link #resources}, for implementations. */
    static int checkLimit(int limit) {
        if (limit <= 0) {
            throw new IllegalArgumentException("page size of a fence store listing must be positive, was " + limit);
        }
        return limit;
    }
}
