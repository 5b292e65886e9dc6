package dev.fencing.spring.support;

import dev.fencing.store.FenceStore;
import dev.fencing.store.RoutingFenceStore;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * Hands the application's bean factory to each store a {@link RoutingFenceStore} routes to that is no bean of its own
 * and asks for one ({@link BeanFactoryAware}), before the startup validator verifies the store: such a store sees the
 * application's beans as it would as a bean. A {@code JdbcFenceStore} behind a route thus listens to every transaction
 * manager bean when verified, and refuses a fenced call made in another manager's transaction nested inside one of its
 * DataSource, with {@code @EnableFencing} alone as with the Spring Boot starter (whose post-processor listens to every
 * manager anyway). One Spring callback, no class of a store module named: a store that is a bean (of this factory or
 * an ancestor) got its own factory from Spring and is left as it is.
 */
final class RoutedStores {

    private RoutedStores() {
    }

    /** Gives {@code beanFactory} to every store {@code store} routes to (at any depth) that is not a bean. */
    static void introduce(ConfigurableListableBeanFactory beanFactory, FenceStore store) {
        if (!(store instanceof RoutingFenceStore)) {
            return;
        }
        Set<Object> beans = Collections.newSetFromMap(new IdentityHashMap<>());
        beans.addAll(BeanFactoryUtils.beansOfTypeIncludingAncestors(beanFactory, FenceStore.class, false, false)
                .values());
        introduce(beanFactory, store, beans, Collections.newSetFromMap(new IdentityHashMap<>()));
    }

    private static void introduce(ConfigurableListableBeanFactory beanFactory, FenceStore store, Set<Object> beans,
                                  Set<FenceStore> seen) {
        if (!seen.add(store)) {
            return;
        }
        if (store instanceof RoutingFenceStore routing) {
            routing.stores().forEach(routed -> introduce(beanFactory, routed, beans, seen));
        } else if (store instanceof BeanFactoryAware aware && !beans.contains(store)) {
            aware.setBeanFactory(beanFactory);
        }
    }
}
