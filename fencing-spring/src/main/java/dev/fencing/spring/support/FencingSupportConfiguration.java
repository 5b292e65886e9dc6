package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.mode.FenceMode;
import dev.fencing.mode.FenceModes;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.spring.EnableFencing;
import dev.fencing.spring.FencingConfigurer;
import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.guard.RejectionListener;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ImportAware;
import org.springframework.context.annotation.Role;
import org.springframework.core.annotation.AnnotationAttributes;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

import java.time.Duration;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Internal: imported by {@code @EnableFencing}, not for applications. Beans both modes share: the
 * {@link FencingSupport} (guard, fence points, counters) and the startup validator; PROXY mode extends it with the
 * advisor, ASPECTJ mode imports it beside fencing-aspect's configuration.
 * Nothing here looks up the application's {@link FenceStore}, {@link TokenIssuer} or {@code MeterRegistry} while
 * beans are being created: the support holds {@link ObjectProvider}s and resolves them on first use, which the
 * startup validator forces once every singleton exists, so the host's beans keep all their post-processing.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
class FencingSupportConfiguration implements ImportAware {

    /** The bean name of the shared support, registered in either mode: its presence means fencing is enabled. */
    static final String SUPPORT_BEAN = "dev.fencing.internalFencingSupport";

    /** The bean name of the {@link FenceModes} the guard checks in (the actuator endpoint switches them). */
    public static final String MODES_BEAN = "dev.fencing.internalFenceModes";

    private static final Log log = LogFactory.getLog(FencingSupportConfiguration.class);

    static final String NO_STORE_MESSAGE = """
            @EnableFencing found no FenceStore bean. Tokens must be checked where the writes land, by every \
            instance of the application, so fencing needs a shared store; define one, e.g. the database store of \
            fencing-jdbc (its table is in the README):

                @Bean
                JdbcFenceStore fenceStore(DataSource dataSource, PlatformTransactionManager transactionManager) {
                    return JdbcFenceStore.builder(dataSource).transactionManager(transactionManager).build();
                }

            For tests and demos in a single JVM only, declare an InMemoryFenceStore bean or use \
            @EnableFencing(allowInMemoryStore = true).""";

    AnnotationAttributes enableFencing;

    @Override
    public void setImportMetadata(AnnotationMetadata importMetadata) {
        this.enableFencing = AnnotationAttributes.fromMap(
                importMetadata.getAnnotationAttributes(EnableFencing.class.getName()));
        if (enableFencing == null) {
            throw new FencingConfigurationException("@EnableFencing is not present on importing class "
                    + importMetadata.getClassName());
        }
    }

    /** The shared support; its collaborators are resolved on first use, not here. */
    @Bean(name = SUPPORT_BEAN)
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    FencingSupport fencingSupport(ObjectProvider<FenceStore> store, ObjectProvider<TokenIssuer> issuer,
                                         ObjectProvider<MeterRegistry> registry,
                                         ObjectProvider<FencingConfigurer> configurer,
                                         ObjectProvider<RejectionListener> rejections,
                                         ObjectProvider<ObservationRegistry> observations,
                                         ObjectProvider<TokenSigner> signer,
                                         ObjectProvider<TokenVerifier> verifier,
                                         BeanFactory beanFactory) {
        long timeoutMillis = enableFencing.getNumber("acquireTimeoutMillis").longValue();
        if (timeoutMillis < 0) {
            throw new FencingConfigurationException("@EnableFencing(acquireTimeoutMillis = " + timeoutMillis
                    + ") must not be negative");
        }
        boolean allowInMemoryStore = enableFencing.getBoolean("allowInMemoryStore");
        return FencingSupport.resolvedOnFirstUse(() -> fenceStore(store, allowInMemoryStore, configurer, beanFactory),
                issuer::getIfAvailable, () -> acquireTimeout(configurer, timeoutMillis), () -> {
                    MeterRegistry meters = registry.getIfAvailable();
                    return meters == null ? FencingMetrics.noop() : new FencingMetrics(meters);
                }, () -> allOrNull(rejections), observations::getIfUnique, () -> TokenSigning.from(signer, verifier),
                ReactiveReturnTypes.factory(beanFactory), () -> beanFactory.getBean(MODES_BEAN, FenceModes.class));
    }

    /**
     * The mode of each resource's checks: {@code @EnableFencing(defaultFenceMode, observe)}, replaced by a
     * {@link FencingConfigurer}s' non-null answers, the first in their order deciding (the starter's
     * {@code fencing.mode} and {@code fencing.modes.*} come first).
     */
    @Bean(name = MODES_BEAN)
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    FenceModes fenceModes(ObjectProvider<FencingConfigurer> configurer) {
        FenceMode defaultMode = enableFencing.getEnum("defaultFenceMode");
        Map<String, FenceMode> resources = new LinkedHashMap<>();
        for (String resource : enableFencing.getStringArray("observe")) {
            resources.put(resource, FenceMode.OBSERVE);
        }
        FencingConfigurer settings = Configurers.of(configurer);
        if (settings.defaultFenceMode() != null) {
            defaultMode = settings.defaultFenceMode();
        }
        resources.putAll(settings.fenceModes());
        // the WARN that checks are observed comes from FencingStartupValidator, once startup accepted the modes
        return new FenceModes(defaultMode, resources);
    }

    private static Duration acquireTimeout(ObjectProvider<FencingConfigurer> configurer, long timeoutMillis) {
        Duration configured = Configurers.of(configurer).acquireTimeout();
        if (configured == null) {
            return Duration.ofMillis(timeoutMillis);
        }
        if (configured.isNegative()) {
            throw new FencingConfigurationException("The acquire timeout (" + configured + ") must not be negative");
        }
        return configured;
    }

    private static FenceStore fenceStore(ObjectProvider<FenceStore> store, boolean allowInMemoryStore,
                                         ObjectProvider<FencingConfigurer> configurer, BeanFactory beanFactory) {
        FenceStore found = store.getIfAvailable();
        if (found != null) {
            return found;
        }
        if (!allowInMemoryStore) {
            String message = Configurers.of(configurer).missingStoreMessage();
            message = message != null ? message : NO_STORE_MESSAGE;
            if (beanFactory.containsBean("environment") && "false".equalsIgnoreCase(
                    beanFactory.getBean("environment", Environment.class).getProperty("fencing.enabled"))) {
                message = "fencing.enabled=false turned the fencing starter off, and with it the store it builds; "
                        + "the @EnableFencing of this application still fences its @Fenced methods. Remove that "
                        + "@EnableFencing too to run them unchecked, or set fencing.enabled=true. " + message;
            }
            if (ReactiveReturnTypes.hasReactiveStore(beanFactory)) {
                // a reactive application: its Mono/Flux methods are fenced by the reactive store; the startup
                // validator refuses any blocking fenced method, which would need this one
                return new ReactiveOnlyFenceStore(message);
            }
            throw new FencingConfigurationException(message);
        }
        log.warn("No FenceStore bean and @EnableFencing(allowInMemoryStore = true): using an InMemoryFenceStore, "
                + "which fences writes made inside this JVM only; for tests and demos, never for a resource shared "
                + "by several instances");
        return new InMemoryFenceStore();
    }

    /**
     * {@code @Scheduled} Kotlin suspend functions resume on whichever thread woke them, with no fencing context of
     * their own: refused at startup unless {@code fencing.kotlin.allow-scheduled-suspend-functions} is set.
     */
    @Bean(name = "dev.fencing.internalScheduledSuspendCheck")
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static ScheduledSuspendCheck fencingScheduledSuspendCheck(ConfigurableListableBeanFactory beans,
                                                              Environment environment) {
        return new ScheduledSuspendCheck(beans,
                environment.getProperty(ScheduledSuspendCheck.ALLOW, Boolean.class, false));
    }

    /**
     * Kotlin suspend handler methods of Spring MVC need Reactor's automatic context propagation, or a coroutine
     * resumed on another request's thread is checked with that request's token.
     */
    @Bean(name = "dev.fencing.internalSuspendingHandlersCheck")
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static SuspendingHandlersCheck fencingSuspendingHandlersCheck(ConfigurableListableBeanFactory beans) {
        return SuspendingHandlersCheck.of(beans);
    }

    /** Checks the beans created after startup (lazy ones, prototypes) whose classes startup could not see. */
    @Bean(name = LateBeanCheck.BEAN)
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static LateBeanCheck fencingLateBeanCheck() {
        return new LateBeanCheck();
    }

    @Bean(name = "dev.fencing.internalFencingStartupValidator")
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    FencingStartupValidator fencingStartupValidator(FencingSupport fencingSupport, Environment environment,
                                                    ObjectProvider<FencingConfigurer> configurers) {
        return new FencingStartupValidator(fencingSupport, enableFencing.getEnum("mode"),
                enableFencing.getNumber("order").intValue(), environment, configurers);
    }

    /**
     * Every {@link RejectionListener} bean (the actuator's record of recent rejections and the application's own) as
     * one, in their order; {@code null} when there is none.
     */
    static RejectionListener allOrNull(ObjectProvider<RejectionListener> rejections) {
        List<RejectionListener> all = rejections.orderedStream().toList();
        return all.isEmpty() ? null : RejectionListener.all(all);
    }
}
