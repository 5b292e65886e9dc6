package dev.fencing.testsupport.core;

import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.testsupport.FenceCompactionContract;

/**
 * The core's in-memory store passes the compaction contract, through the public API only (the JDBC store passes it
 * in fencing-jdbc). It lives here because fencing-core cannot depend on this module.
 */
class InMemoryFenceCompactionContractTest extends FenceCompactionContract {

    @Override
    protected Subject newSubject() {
        InMemoryFenceStore store = new InMemoryFenceStore();
        return new Subject(store, store);
    }
}
