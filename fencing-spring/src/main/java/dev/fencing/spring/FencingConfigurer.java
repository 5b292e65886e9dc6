package dev.fencing.spring;

import dev.fencing.mode.FenceMode;

import java.time.Duration;
import java.util.Map;

/**
 * Optional settings for {@code @EnableFencing} that come from outside the annotation, such as the Spring Boot
 * auto-configuration's {@code fencing.*} properties. The non-null answers of the context's beans of this type replace
 * the annotation's, the first bean in their order ({@code @Order}) deciding each setting and each resource's mode (the
 * starter's {@code fencing.*} properties, when set, come first); they are looked up on first use (when the context's
 * singletons exist), never while bean post-processors are being registered.
 */
public interface FencingConfigurer {

    /**
     * How long {@code @Fenced(acquire = true)} waits for a lock; {@code null} (default) keeps
     * {@link EnableFencing#acquireTimeoutMillis()}.
     */
    default Duration acquireTimeout() {
        return null;
    }

    /**
     * What the startup failure says when the context has no {@code FenceStore} bean (and no in-memory fallback was
     * allowed): how to add one in this kind of application; {@code null} (default) keeps the message for plain Spring
     * applications, which shows a store bean definition.
     */
    default String missingStoreMessage() {
        return null;
    }

    /**
     * The mode of every resource without one of its own; {@code null} (default) keeps
     * {@link EnableFencing#defaultFenceMode()}.
     */
    default FenceMode defaultFenceMode() {
        return null;
    }

    /**
     * Modes per declared resource, added to (and replacing) those of {@link EnableFencing#observe()}; empty by
     * default.
     */
    default Map<String, FenceMode> fenceModes() {
        return Map.of();
    }

    /**
     * Whether this application runs as one instance only (a demo of a lock service, several clients in one JVM), so
     * that a fence store keeping max_seen in this JVM (an {@code InMemoryFenceStore}, an
     * {@code InMemoryReactiveFenceStore}, either behind a {@code RoutingFenceStore} route, or the fallback of
     * {@link EnableFencing#allowInMemoryStore()}) may sit beside a token issuer of a lock service other processes
     * share; startup refuses that pair otherwise. {@code null} (default) leaves it to the {@code Environment}
     * property {@code fencing.store.in-memory.single-instance} ({@code false} when unset).
     */
    default Boolean singleInstance() {
        return null;
    }

    /**
     * The setting outside the code that made the bean named {@code beanName} (the starter's in-memory store:
     * {@code fencing.store.type=in-memory}), for the startup failures that name the bean; {@code null} (default) for
     * a bean the application declared.
     */
    default String settingOf(String beanName) {
        return null;
    }

    /**
     * How this kind of application keeps max_seen where every instance checks it, for the startup failure of a fence
     * store kept in this JVM beside a shared lock service; {@code null} (default) keeps the advice for plain Spring
     * applications (a {@code JdbcFenceStore} bean; for reactive methods an {@code R2dbcFenceStore} bean).
     *
     * @param reactive whether a reactive in-memory store is among the stores refused
     */
    default String sharedStoreAdvice(boolean reactive) {
        return null;
    }

    /**
     * Whether this configurer's answers are settings given outside the code, which no configurer written in it may
     * override (the starter's {@code fencing.*} properties that are set): read before every other configurer, whatever
     * their {@code @Order}; {@code false} by default.
     */
    default boolean explicitSettings() {
        return false;
    }
}
