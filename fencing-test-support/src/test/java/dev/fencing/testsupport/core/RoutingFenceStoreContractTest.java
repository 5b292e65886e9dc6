package dev.fencing.testsupport.core;

import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.store.RoutingFenceStore;
import dev.fencing.testsupport.FenceStoreContract;

/**
 * The core's routing store passes the store contract, with resources routed to one store and the rest to the
 * fallback. Here and not in fencing-core for the reason {@link InMemoryFenceStoreContractTest} gives.
 */
class RoutingFenceStoreContractTest extends FenceStoreContract {

    private final RoutingFenceStore store = RoutingFenceStore.builder()
            .route("accounts", new InMemoryFenceStore()).fallback(new InMemoryFenceStore()).build();

    @Override
    protected FenceStore store() {
        return store;
    }
}
