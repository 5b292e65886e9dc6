package dev.fencing.boot.autoconfigure;

import dev.fencing.r2dbc.R2dbcFenceStore;
import dev.fencing.recovery.FenceInventory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.util.ClassUtils;

/**
 * The R2DBC fence table's listing, for a reactive application's startup checks. Loaded only when fencing-r2dbc is on
 * the classpath ({@link #PRESENT}).
 */
final class R2dbcInventoryParts {

    static final boolean PRESENT = ClassUtils.isPresent("dev.fencing.r2dbc.R2dbcFenceStore",
            R2dbcInventoryParts.class.getClassLoader());

    private R2dbcInventoryParts() {
    }

    /** The listing of the unique {@link R2dbcFenceStore} bean; {@code null} when there is none. */
    static FenceInventory inventory(BeanFactory beanFactory) {
        R2dbcFenceStore store = beanFactory.getBeanProvider(R2dbcFenceStore.class).getIfUnique();
        return store == null ? null : store.inventory();
    }
}
