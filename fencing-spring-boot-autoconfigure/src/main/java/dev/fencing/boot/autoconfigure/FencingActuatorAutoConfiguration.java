package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.boot.actuate.FencingAdminWebExtension;
import dev.fencing.boot.actuate.FencingEndpoint;
import dev.fencing.mode.FenceModes;
import dev.fencing.boot.actuate.FencingHealthIndicator;
import dev.fencing.boot.actuate.FencingRejections;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.reactive.ReactiveFenceStore;
import dev.fencing.store.FenceStore;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.PropertiesEndpointAccessResolver;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.util.ClassUtils;
import org.springframework.util.function.SingletonSupplier;

import java.util.Set;

/**
 * The actuator parts, when Spring Boot's actuator is on the classpath: the {@code fencing} health indicator
 * ({@code management.health.fencing.enabled}, on by default) and the {@code fencing} endpoint (available when exposed,
 * as every endpoint: {@code management.endpoints.web.exposure.include=health,fencing}). Both need a {@link FenceStore}
 * bean, or in a reactive application without one a {@code ReactiveFenceStore} bean, and back off when the
 * application defines its own. The endpoint's write operation (lowering a resource's
 * max_seen after a bad token, {@link FencingAdminWebExtension}) exists only with {@code fencing.admin.enabled=true}.
 * A {@code SanitizingFunction} keeps the {@code fencing.signing.*} secrets masked in {@code /actuator/configprops}
 * and {@code /actuator/env}.
 */
@AutoConfiguration(after = {FencingAutoConfiguration.class, FencingJdbcAutoConfiguration.class,
        FencingR2dbcAutoConfiguration.class}, afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration"})
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
public class FencingActuatorAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    @ConditionalOnBean(FenceStore.class)
    @ConditionalOnEnabledHealthIndicator("fencing")
    static class HealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "fencingHealthIndicator")
        FencingHealthIndicator fencingHealthIndicator(FenceStore store, ObjectProvider<TokenIssuer> issuer) {
            return new FencingHealthIndicator(store, issuer.getIfUnique());
        }
    }

    /** A reactive application's health: its ReactiveFenceStore, when it has no blocking store. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({HealthIndicator.class, ReactiveFenceStore.class})
    @ConditionalOnMissingBean(FenceStore.class)
    @ConditionalOnBean(ReactiveFenceStore.class)
    @ConditionalOnEnabledHealthIndicator("fencing")
    static class ReactiveHealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "fencingHealthIndicator")
        FencingHealthIndicator fencingHealthIndicator(ReactiveFenceStore store, ObjectProvider<TokenIssuer> issuer) {
            return FencingHealthIndicator.reactive(store, store::verify, issuer.getIfUnique());
        }
    }

    /** Signing secrets stay masked in configprops and env, whatever show-values says. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(SanitizingFunction.class)
    static class SanitizingConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "fencingSigningKeySanitizer")
        SanitizingFunction fencingSigningKeySanitizer(ObjectProvider<FencingProperties> properties) {
            // the keys are bound once: read them on the first sanitized entry, not on every entry of every call
            return new SigningKeySanitizer(SingletonSupplier.of(() -> {
                FencingProperties props = properties.getIfAvailable();
                return props == null ? Set.<String>of() : SigningKeySanitizer.secretsOf(props.getSigning());
            }));
        }
    }

    /** A blocking fence store, or a reactive one (by name: fencing-reactor is optional). */
    static final class OnAnyFenceStore extends AnyNestedCondition {

        OnAnyFenceStore() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnBean(FenceStore.class)
        static final class Blocking {
        }

        @ConditionalOnBean(type = "dev.fencing.reactive.ReactiveFenceStore")
        static final class Reactive {
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class})
    @Conditional(OnAnyFenceStore.class)
    @ConditionalOnAvailableEndpoint(FencingEndpoint.class)
    static class EndpointConfiguration {

        /** Write bodies with a key no operation takes answer 400 (Boot would drop the key and run the operation). */
        @Bean
        static StrictWriteBodies fencingStrictWriteBodies() {
            return new StrictWriteBodies();
        }

        /**
         * On WebFlux, a path with a ';', a write with a query string, or a body "resource" other than the path's
         * answers 400 before the operation runs ({@link StrictWriteBodies} refuses them on the servlet stack, from the
         * request, which the operation cannot see on WebFlux).
         */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
        @ConditionalOnClass(name = "org.springframework.web.server.WebFilter")
        static class ReactivePathConfiguration {

            @Bean
            ActuatorRequestFilter fencingActuatorRequestFilter(ObjectProvider<PathMappedEndpoints> endpoints,
                                                               ObjectProvider<ServerCodecConfigurer> codecs) {
                return new ActuatorRequestFilter(SingletonSupplier.of(endpoints::getIfAvailable),
                        SingletonSupplier.of(() -> codecs.getIfAvailable(ServerCodecConfigurer::create)));
            }
        }

        /** Fed by the fence guard only when a check rejects (a {@code RejectionListener}). */
        @Bean
        @ConditionalOnMissingBean
        FencingRejections fencingRejections(ObjectProvider<FencingProperties> properties) {
            FencingProperties props = properties.getIfAvailable();
            return new FencingRejections(FencingRejections.DEFAULT_CAPACITY,
                    props != null && props.getActuator().isShowHolders());
        }

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnBean(FenceStore.class)
        FencingEndpoint fencingEndpoint(FenceStore store, ObjectProvider<TokenIssuer> issuer,
                                        ObjectProvider<FencingProperties> properties,
                                        ObjectProvider<MeterRegistry> registry,
                                        ObjectProvider<FencingRejections> rejections,
                                        ObjectProvider<FenceModes> modes, Environment environment,
                                        ObjectProvider<EndpointAccessResolver> access,
                                        ListableBeanFactory beans) {
            FencingProperties props = properties.getIfAvailable();
            // the admin extension, when there is one, says it once (it checks too: an endpoint of the application's
            // own makes this method back off)
            requireSecuredAdmin(props, environment, access,
                    beans.getBeanNamesForType(FencingAdminWebExtension.class, true, false).length == 0);
            return new FencingEndpoint(store, issuer.getIfUnique(), props == null ? null : props.getAcquireTimeout(),
                    registry.getIfUnique(), rejections.getIfUnique(), modes.getIfUnique(),
                    props != null && props.getAdmin().isEnabled());
        }

        /** The write operation that lowers a resource's max_seen after a bad token: only when asked for. */
        @Bean
        @ConditionalOnBooleanProperty(name = "fencing.admin.enabled")
        @ConditionalOnBean(FenceStore.class)
        @ConditionalOnMissingBean
        FencingAdminWebExtension fencingAdminWebExtension(FenceStore store, ObjectProvider<TokenIssuer> issuer,
                                                          ObjectProvider<MeterRegistry> registry,
                                                          ObjectProvider<FencingEndpoint> endpoint,
                                                          ObjectProvider<FencingProperties> properties,
                                                          ObjectProvider<EndpointAccessResolver> access,
                                                          BeanFactory beanFactory, Environment environment) {
            // required here too: an application's own FencingEndpoint bean makes the starter's back off, and this
            // extension still serves the admin operations on it
            requireSecuredAdmin(properties.getIfAvailable(), environment, access, true);
            // the extension's POST /actuator/fencing replaces the endpoint's, so it serves the mode switch too
            // a reset or raise below a stored issuer migration's base is refused (that issuer's tokens are above it)
            return FencingAdminWebExtension.of(store, issuer.getIfUnique(), registry.getIfUnique(),
                    endpoint.getIfUnique(), StoredOffsets.forAdmin(beanFactory, environment));
        }

        private static final String SPRING_SECURITY = "org.springframework.security.core.Authentication";

        private static final EndpointId FENCING = EndpointId.of("fencing");

        /**
         * With {@code fencing.admin.enabled=true} (the mode switch to observe, the reset and the floor raise, on either
         * stack's endpoint): fails startup when Spring Security is not on the class path, unless
         * {@code fencing.admin.allow-unsecured=true} says the management port is protected another way (then warns).
         * An endpoint whose access is limited (read-only, none) serves no write operation: nothing to secure, and a
         * warning that the admin operations are not served.
         */
        static void requireSecuredAdmin(FencingProperties properties, Environment environment,
                                        ObjectProvider<EndpointAccessResolver> resolver) {
            requireSecuredAdmin(properties, environment, resolver, true);
        }

        /**
         * {@link #requireSecuredAdmin(FencingProperties, Environment, ObjectProvider)}; warns only when {@code warn}.
         */
        static void requireSecuredAdmin(FencingProperties properties, Environment environment,
                                        ObjectProvider<EndpointAccessResolver> resolver, boolean warn) {
            // the bound properties, or the raw property when the starter's configuration (which binds them) is left
            // out: the extension itself is made on the raw property
            boolean enabled = properties != null ? properties.getAdmin().isEnabled()
                    : environment.getProperty("fencing.admin.enabled", Boolean.class, false);
            if (!enabled) {
                return;
            }
            Access access = resolver.getIfAvailable(() -> new PropertiesEndpointAccessResolver(environment))
                    .accessFor(FENCING, Access.UNRESTRICTED);
            if (access != Access.UNRESTRICTED) {
                if (!warn) {
                    return;
                }
                LogFactory.getLog(FencingActuatorAutoConfiguration.class).warn("fencing.admin.enabled=true, but the "
                        + "fencing endpoint's access is " + access + " (management.endpoint.fencing.access, or "
                        + "management.endpoints.access.default or .max-permitted): its write operations (the mode "
                        + "switch, the reset, the floor raise) are not served");
                return;
            }
            if (ClassUtils.isPresent(SPRING_SECURITY, FencingActuatorAutoConfiguration.class.getClassLoader())) {
                return; // the library cannot tell whether the endpoint is secured; without Spring Security it is not
            }
            String open = "fencing.admin.enabled=true and Spring Security is not on the class path: POST "
                    + "/actuator/fencing/{resource} (lowering a resource's max_seen, with force refusing the "
                    + "current holder) and POST /actuator/fencing (switching a resource to observe mode, where "
                    + "stale writes land; raising floors) are open to every caller that reaches the management "
                    + "port";
            if (!environment.getProperty("fencing.admin.allow-unsecured", Boolean.class, false)) {
                throw new FencingConfigurationException(open + ". Add Spring Security with a rule requiring a "
                        + "role for the actuator endpoints; or, when the management port is protected another "
                        + "way (bound to localhost, behind an authenticating gateway), say so with "
                        + "fencing.admin.allow-unsecured=true; or keep fencing.admin.enabled off");
            }
            if (warn) {
                LogFactory.getLog(FencingActuatorAutoConfiguration.class).warn(open + " (fencing.admin.allow-unsecured="
                        + "true: protected outside this application, you said).");
            }
        }

        /**
         * A reactive application's endpoint: counts, modes and rejections of its ReactiveFenceStore's fence, when it
         * has no blocking store; no write operation (an R2DBC store has no administrative side).
         */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(ReactiveFenceStore.class)
        @ConditionalOnMissingBean(FenceStore.class)
        @ConditionalOnBean(ReactiveFenceStore.class)
        static class ReactiveEndpointConfiguration {

            @Bean
            @ConditionalOnMissingBean
            FencingEndpoint fencingEndpoint(ReactiveFenceStore store, ObjectProvider<TokenIssuer> issuer,
                                            ObjectProvider<FencingProperties> properties,
                                            ObjectProvider<MeterRegistry> registry,
                                            ObjectProvider<FencingRejections> rejections,
                                            ObjectProvider<FenceModes> modes, Environment environment,
                                            ObjectProvider<EndpointAccessResolver> access) {
                FencingProperties props = properties.getIfAvailable();
                // its mode switch to observe is an admin operation too
                EndpointConfiguration.requireSecuredAdmin(props, environment, access);
                return FencingEndpoint.reactive(store, issuer.getIfUnique(),
                        props == null ? null : props.getAcquireTimeout(), registry.getIfUnique(),
                        rejections.getIfUnique(), modes.getIfUnique(), props != null && props.getAdmin().isEnabled());
            }
        }
    }
}
