package dev.fencing.testsupport.core;

import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.testsupport.FenceStoreContract;

/**
 * The core's in-memory store passes the store contract, extended as a third party extends it: from a package of its
 * own, through the public API only, with fencing-test-support as its one test dependency. It lives here and not in
 * fencing-core because fencing-core cannot depend on this module (which depends on it).
 */
class InMemoryFenceStoreContractTest extends FenceStoreContract {

    private final InMemoryFenceStore store = new InMemoryFenceStore();

    @Override
    protected FenceStore store() {
        return store;
    }
}
