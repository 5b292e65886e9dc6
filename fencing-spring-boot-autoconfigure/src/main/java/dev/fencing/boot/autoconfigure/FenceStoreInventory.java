package dev.fencing.boot.autoconfigure;

import dev.fencing.recovery.FenceInventory;
import dev.fencing.store.FenceStore;

/**
 * The listing of the application's fence store that the startup checks read its highest max_seen from: the store
 * itself when it is a {@link FenceInventory} (in-memory), a {@code JdbcFenceAdmin} on a JDBC store, otherwise none.
 * Shared by the issuer offset's first-start check and the issuer counter check, so both read the same value.
 */
final class FenceStoreInventory {

    private FenceStoreInventory() {
    }

    /** The listing of {@code store}; {@code null} when there is no store or it offers no listing. */
    static FenceInventory of(FenceStore store) {
        if (store instanceof FenceInventory own) {
            return own;
        }
        return store != null && JdbcOffsetParts.PRESENT ? JdbcOffsetParts.inventory(store) : null;
    }
}
