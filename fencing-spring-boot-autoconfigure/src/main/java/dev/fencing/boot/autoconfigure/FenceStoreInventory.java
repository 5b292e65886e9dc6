package dev.fencing.boot.autoconfigure;

import dev.fencing.recovery.FenceInventory;
import dev.fencing.recovery.RoutedFenceAdmin;
import dev.fencing.store.FenceStore;
import dev.fencing.store.RoutingFenceStore;
import org.springframework.beans.factory.BeanFactory;

/**
 * The listing of the application's fence store that the startup checks read its highest max_seen from: the store
 * itself when it is a {@link FenceInventory} (in-memory), a {@code JdbcFenceAdmin} on a JDBC store, those of the stores
 * a routing store sends resources to, as one ({@link RoutedFenceAdmin}), the R2DBC store's inventory in a reactive
 * application, otherwise none.
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
        if (store instanceof RoutingFenceStore routing) {
            return RoutedFenceAdmin.of(routing, FenceStoreInventory::of);
        }
        return store != null && JdbcOffsetParts.PRESENT ? JdbcOffsetParts.inventory(store) : null;
    }

    /**
     * The listing of the application's fence store: its unique {@link FenceStore} bean's, or, in a reactive
     * application without one, its R2DBC store's; {@code null} when neither offers one.
     */
    static FenceInventory of(BeanFactory beanFactory) {
        FenceStore store = beanFactory.getBeanProvider(FenceStore.class).getIfUnique();
        if (store != null) {
            return of(store);
        }
        return R2dbcInventoryParts.PRESENT ? R2dbcInventoryParts.inventory(beanFactory) : null;
    }
}
