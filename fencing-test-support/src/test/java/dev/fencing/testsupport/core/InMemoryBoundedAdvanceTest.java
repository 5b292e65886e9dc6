package dev.fencing.testsupport.core;

import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.testsupport.BoundedAdvanceContract;

/** The in-memory store with a bound on one advance passes the store contract and the bound's own. */
class InMemoryBoundedAdvanceTest extends BoundedAdvanceContract {

    private final InMemoryFenceStore store = new InMemoryFenceStore(MAX_ADVANCE);

    @Override
    protected FenceStore store() {
        return store;
    }
}
