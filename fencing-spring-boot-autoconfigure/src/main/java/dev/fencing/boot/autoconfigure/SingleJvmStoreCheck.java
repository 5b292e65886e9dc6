package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.reactive.ReactiveTokenIssuer;
import dev.fencing.signing.SigningTokenIssuer;
import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.store.RoutingFenceStore;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

import java.util.ArrayList;
import java.util.List;

/**
 * Fails startup where a fence store that keeps max_seen in this JVM sits beside a token issuer whose locks other
 * processes share (the JDBC lease, ZooKeeper, etcd, Redisson, Hazelcast, or any issuer of the application's): the
 * lock passes between instances, but each instance checks its writes against its own max_seen only, so a paused
 * instance's write lands after another instance's newer one. {@value #PROPERTY}{@code =true} says the application
 * runs as one instance, where the pair is sound (a demo of the lock service, several clients in one JVM).
 */
final class SingleJvmStoreCheck {

    static final String PROPERTY = "fencing.store.in-memory.single-instance";

    private static final String REACTIVE_IN_MEMORY_STORE = "dev.fencing.reactive.InMemoryReactiveFenceStore";

    private static final String REACTIVE_ISSUER = "dev.fencing.reactive.ReactiveTokenIssuer";

    private SingleJvmStoreCheck() {
    }

    static void check(ConfigurableListableBeanFactory beans, Environment environment) {
        if (Binder.get(environment).bind(PROPERTY, Boolean.class).orElse(false)) {
            return;
        }
        List<String> stores = inMemoryStores(beans);
        if (stores.isEmpty()) {
            return;
        }
        for (String name : beans.getBeanNamesForType(TokenIssuer.class, true, false)) {
            TokenIssuer issuer = beans.getBean(name, TokenIssuer.class);
            refuseShared(stores, "TokenIssuer", name, lockService(issuer));
        }
        if (ClassUtils.isPresent(REACTIVE_ISSUER, SingleJvmStoreCheck.class.getClassLoader())) {
            Reactive.check(beans, stores); // a reactive-only application's issuer, which reactive @Fenced methods use
        }
    }

    /** The ReactiveTokenIssuer beans, in a class of their own: loaded only when fencing-reactor is present. */
    private static final class Reactive {
        static void check(ConfigurableListableBeanFactory beans, List<String> stores) {
            for (String name : beans.getBeanNamesForType(ReactiveTokenIssuer.class, true, false)) {
                ReactiveTokenIssuer reactive = beans.getBean(name, ReactiveTokenIssuer.class);
                TokenIssuer adapted = ReactiveTokenIssuer.blockingIssuerOf(reactive);
                refuseShared(stores, "ReactiveTokenIssuer", name, adapted == null ? null : lockService(adapted),
                        ClassUtils.getUserClass(reactive).getName());
            }
        }
    }

    private static void refuseShared(List<String> stores, String kind, String name, TokenIssuer lockService) {
        refuseShared(stores, kind, name, lockService, null);
    }

    /** Fails unless {@code lockService} is this JVM's ({@code null}: a reactive issuer of its own, named by type). */
    private static void refuseShared(List<String> stores, String kind, String name, TokenIssuer lockService,
                                     String ownType) {
        if (!(lockService instanceof InMemoryTokenIssuer)) {
            String type = lockService == null ? ownType : ClassUtils.getUserClass(lockService).getName();
            throw new FencingConfigurationException(String.join(" and ", stores) + " keep" + (stores.size() == 1
                    ? "s" : "") + " max_seen in this JVM, but the " + kind + " bean '" + name + "' ("
                    + type + ") takes its locks in a service other "
                    + "processes share: a lock passes from one instance to the next, and each checks writes "
                    + "against its own max_seen only, so a paused instance's stale write lands after another's "
                    + "newer one. Keep max_seen where every instance checks it: fencing.store.type=jdbc (the "
                    + "default), or a JdbcFenceStore bean" + (String.join("", stores).contains("Reactive")
                    ? " (for reactive @Fenced methods: an R2dbcFenceStore, which fencing.store.type=jdbc "
                    + "makes on the R2DBC ConnectionFactory)" : "") + ". If this application runs as one instance "
                    + "only (a demo of the lock service, several clients in one JVM), set " + PROPERTY + "=true");
        }
    }

    /** The in-memory stores of the context, named as the message says them. */
    private static List<String> inMemoryStores(ConfigurableListableBeanFactory beans) {
        List<String> stores = new ArrayList<>();
        for (String name : beans.getBeanNamesForType(FenceStore.class, true, false)) {
            Class<?> type = userType(beans, name);
            if (InMemoryFenceStore.class.isAssignableFrom(type)) {
                stores.add(said(beans, name, "InMemoryFenceStore"));
            } else if (RoutingFenceStore.class.isAssignableFrom(type)
                    && routesToInMemory(beans.getBean(name, RoutingFenceStore.class))) {
                // a route to an in-memory store keeps those resources' max_seen in this JVM just the same
                stores.add("the InMemoryFenceStore the RoutingFenceStore bean '" + name + "' routes to");
            }
        }
        ClassLoader loader = SingleJvmStoreCheck.class.getClassLoader();
        if (ClassUtils.isPresent(REACTIVE_IN_MEMORY_STORE, loader)) {
            Class<?> reactive = ClassUtils.resolveClassName(REACTIVE_IN_MEMORY_STORE, loader);
            for (String name : beans.getBeanNamesForType(reactive, true, false)) {
                stores.add(said(beans, name, "InMemoryReactiveFenceStore"));
            }
        }
        return stores;
    }

    private static boolean routesToInMemory(RoutingFenceStore routing) {
        for (FenceStore store : routing.stores()) {
            if (store instanceof InMemoryFenceStore
                    || store instanceof RoutingFenceStore nested && routesToInMemory(nested)) {
                return true;
            }
        }
        return false;
    }

    private static String said(ConfigurableListableBeanFactory beans, String name, String type) {
        return StarterBeans.madeByStarter(beans, name)
                ? "fencing.store.type=in-memory (its " + type + " '" + name + "')"
                : "the application's " + type + " bean '" + name + "'";
    }

    /** The issuer that takes the locks: {@code issuer} itself, or the one an offset or signing issuer wraps. */
    private static TokenIssuer lockService(TokenIssuer issuer) {
        TokenIssuer current = issuer;
        while (true) {
            if (current instanceof OffsetTokenIssuer offset) {
                current = offset.delegate();
            } else if (current instanceof SigningTokenIssuer signing) {
                current = signing.delegate();
            } else {
                return current;
            }
        }
    }

    private static Class<?> userType(ConfigurableListableBeanFactory beans, String name) {
        Class<?> type = beans.getType(name, false);
        return type == null ? Object.class : ClassUtils.getUserClass(type);
    }
}
