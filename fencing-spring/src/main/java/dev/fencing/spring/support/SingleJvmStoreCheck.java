package dev.fencing.spring.support;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.reactive.ReactiveTokenIssuer;
import dev.fencing.signing.SigningTokenIssuer;
import dev.fencing.spring.FencingConfigurer;
import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.store.RoutingFenceStore;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

import java.util.ArrayList;
import java.util.List;

/**
 * Refuses a fence store that keeps max_seen in this JVM beside a token issuer whose locks other processes share (the
 * JDBC lease, ZooKeeper, etcd, Redisson, Hazelcast, or any issuer of the application's): the lock passes between
 * instances, but each instance checks its writes against its own max_seen only, so a paused instance's write lands
 * after another instance's newer one. {@value #PROPERTY}{@code =true} (or a {@link FencingConfigurer} answering
 * {@link FencingConfigurer#singleInstance()}) says the application runs as one instance, where the pair is sound (a
 * demo of the lock service, several clients in one JVM). One check for {@code @EnableFencing} and the starter, run by
 * the startup validator once every singleton exists; the starter words its stores and the fix through its
 * configurer.
 */
final class SingleJvmStoreCheck {

    /** The Environment property that says the application runs as one instance only. */
    static final String PROPERTY = "fencing.store.in-memory.single-instance";

    private static final String REACTIVE_IN_MEMORY_STORE = "dev.fencing.reactive.InMemoryReactiveFenceStore";

    private static final String REACTIVE_ISSUER = "dev.fencing.reactive.ReactiveTokenIssuer";

    private SingleJvmStoreCheck() {
    }

    /**
     * What is wrong, or {@code null}.
     *
     * @param resolvedStore the store {@code @EnableFencing} resolved: an in-memory one while the context has no
     *                      {@code FenceStore} bean is the fallback of {@code allowInMemoryStore}
     */
    static String problem(ConfigurableListableBeanFactory beans, Environment environment, FencingConfigurer settings,
                          FenceStore resolvedStore) {
        Boolean said = settings.singleInstance();
        if (said != null ? said : environment.getProperty(PROPERTY, Boolean.class, false)) {
            return null;
        }
        List<String> stores = inMemoryStores(beans, settings, resolvedStore);
        if (stores.isEmpty()) {
            return null;
        }
        for (String name : beans.getBeanNamesForType(TokenIssuer.class, true, false)) {
            TokenIssuer issuer = beans.getBean(name, TokenIssuer.class);
            String problem = shared(stores, settings, "TokenIssuer", name, lockService(issuer), null);
            if (problem != null) {
                return problem;
            }
        }
        if (ClassUtils.isPresent(REACTIVE_ISSUER, SingleJvmStoreCheck.class.getClassLoader())) {
            // a reactive-only application's issuer, which reactive @Fenced methods use
            return Reactive.problem(beans, settings, stores);
        }
        return null;
    }

    /** The ReactiveTokenIssuer beans, in a class of their own: loaded only when fencing-reactor is present. */
    private static final class Reactive {
        static String problem(ConfigurableListableBeanFactory beans, FencingConfigurer settings, List<String> stores) {
            for (String name : beans.getBeanNamesForType(ReactiveTokenIssuer.class, true, false)) {
                ReactiveTokenIssuer reactive = beans.getBean(name, ReactiveTokenIssuer.class);
                TokenIssuer adapted = ReactiveTokenIssuer.blockingIssuerOf(reactive);
                String problem = shared(stores, settings, "ReactiveTokenIssuer", name,
                        adapted == null ? null : lockService(adapted), ClassUtils.getUserClass(reactive).getName());
                if (problem != null) {
                    return problem;
                }
            }
            return null;
        }
    }

    /** The refusal unless {@code lockService} is this JVM's ({@code null}: a reactive issuer of its own, by type). */
    private static String shared(List<String> stores, FencingConfigurer settings, String kind, String name,
                                 TokenIssuer lockService, String ownType) {
        if (lockService instanceof InMemoryTokenIssuer) {
            return null;
        }
        String type = lockService == null ? ownType : ClassUtils.getUserClass(lockService).getName();
        boolean reactive = String.join("", stores).contains("Reactive");
        String advice = settings.sharedStoreAdvice(reactive);
        String allow = PROPERTY + "=true";
        if (advice == null) { // no starter: say where the property goes, and the other way to say it
            advice = "a JdbcFenceStore bean (dev.fencing:fencing-jdbc)" + (reactive ? " (for reactive @Fenced "
                    + "methods: an R2dbcFenceStore bean, dev.fencing:fencing-r2dbc)" : "");
            allow = "the Environment property " + PROPERTY + "=true (-D" + PROPERTY + "=true, a @PropertySource), "
                    + "or declare a FencingConfigurer bean whose singleInstance() returns Boolean.TRUE";
        }
        return String.join(" and ", stores) + " keep" + (stores.size() == 1 ? "s" : "") + " max_seen in this JVM, "
                + "but the " + kind + " bean '" + name + "' (" + type + ") takes its locks in a service other "
                + "processes share: a lock passes from one instance to the next, and each checks writes against its "
                + "own max_seen only, so a paused instance's stale write lands after another's newer one. Keep "
                + "max_seen where every instance checks it: " + advice + ". If this application runs as one "
                + "instance only (a demo of the lock service, several clients in one JVM), set " + allow;
    }

    /** The in-memory stores of the context, named as the message says them. */
    private static List<String> inMemoryStores(ConfigurableListableBeanFactory beans, FencingConfigurer settings,
                                               FenceStore resolvedStore) {
        List<String> stores = new ArrayList<>();
        String[] storeBeans = beans.getBeanNamesForType(FenceStore.class, true, false);
        for (String name : storeBeans) {
            Class<?> type = userType(beans, name);
            if (InMemoryFenceStore.class.isAssignableFrom(type)) {
                stores.add(said(settings, name, "InMemoryFenceStore"));
            } else if (RoutingFenceStore.class.isAssignableFrom(type)
                    && routesToInMemory(beans.getBean(name, RoutingFenceStore.class))) {
                // a route to an in-memory store keeps those resources' max_seen in this JVM just the same
                stores.add("the InMemoryFenceStore the RoutingFenceStore bean '" + name + "' routes to");
            }
        }
        if (storeBeans.length == 0 && resolvedStore instanceof InMemoryFenceStore) {
            stores.add("the InMemoryFenceStore of @EnableFencing(allowInMemoryStore = true), used for want of a "
                    + "FenceStore bean,");
        }
        ClassLoader loader = SingleJvmStoreCheck.class.getClassLoader();
        if (ClassUtils.isPresent(REACTIVE_IN_MEMORY_STORE, loader)) {
            Class<?> reactive = ClassUtils.resolveClassName(REACTIVE_IN_MEMORY_STORE, loader);
            for (String name : beans.getBeanNamesForType(reactive, true, false)) {
                stores.add(said(settings, name, "InMemoryReactiveFenceStore"));
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

    private static String said(FencingConfigurer settings, String name, String type) {
        String setting = settings.settingOf(name);
        return setting != null ? setting + " (its " + type + " '" + name + "')"
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
