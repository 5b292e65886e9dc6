package dev.fencing.testsupport.core;

import dev.fencing.reactive.InMemoryReactiveFenceStore;
import dev.fencing.reactive.ReactiveFenceStore;
import dev.fencing.testsupport.ReactiveFenceStoreContract;

/**
 * fencing-reactor's in-memory store passes the reactive store contract, extended as a third party extends it. It
 * lives here because fencing-reactor cannot depend on this module (which depends on it).
 */
class InMemoryReactiveFenceStoreContractTest extends ReactiveFenceStoreContract {

    private final InMemoryReactiveFenceStore store = new InMemoryReactiveFenceStore();

    @Override
    protected ReactiveFenceStore store() {
        return store;
    }
}
