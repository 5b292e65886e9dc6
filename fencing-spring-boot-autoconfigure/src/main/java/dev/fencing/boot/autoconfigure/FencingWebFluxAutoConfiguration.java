package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.guard.RejectionListener;
import dev.fencing.mode.FenceModes;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.web.reactive.FencingTokenWebFilter;
import dev.fencing.web.reactive.LeftBindingsWebFilter;
import dev.fencing.web.reactive.FencingWebExceptionHandler;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;

import java.util.List;

/**
 * The WebFlux parts of fencing-web in a reactive web application: the {@link FencingWebExceptionHandler} (refused
 * calls as problem details) unless the application registered one, and the {@link FencingTokenWebFilter} that binds
 * callers' tokens into the Reactor Context only when {@code fencing.web.reactive.path-patterns} names the internal
 * paths where callers are trusted (no default; a pattern that matches paths under any first segment fails startup).
 * With a {@link TokenVerifier} bean (the {@code fencing.signing.*} properties make one) the filter also refuses
 * unsigned or badly signed tokens before the request runs, counted and listed as the servlet filter's are. The filter
 * needs fencing-reactor: patterns set without it fail startup saying so. In every WebFlux application, the
 * {@link LeftBindingsWebFilter} (a scope earlier work left open on an event-loop thread is closed when a request
 * starts there).
 */
@AutoConfiguration(after = FencingAutoConfiguration.class)
@ConditionalOnClass(FencingWebExceptionHandler.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
@EnableConfigurationProperties(FencingProperties.class)
public class FencingWebFluxAutoConfiguration {

    static final String PATH_PATTERNS = "fencing.web.reactive.path-patterns";

    /**
     * The servlet filter's patterns set in a WebFlux application: nothing reads them here, and the header would be
     * refused on every path they were meant to open; startup fails naming the property this stack reads.
     */
    @Bean
    static org.springframework.beans.factory.SmartInitializingSingleton fencingOtherWebStackCheck(
            org.springframework.core.env.Environment environment) {
        return () -> {
            if (Binder.get(environment).bind(FencingWebAutoConfiguration.URL_PATTERNS,
                    Bindable.listOf(String.class)).isBound()) {
                throw new FencingConfigurationException(FencingWebAutoConfiguration.URL_PATTERNS + " is set, but "
                        + "this is a WebFlux application, whose Fencing-Token filter reads " + PATH_PATTERNS
                        + " (path patterns such as /internal/**): nothing reads the property set, and the header "
                        + "would be refused on those paths");
            }
        };
    }

    private static final Log log = LogFactory.getLog(FencingWebFluxAutoConfiguration.class);

    @Bean
    @ConditionalOnMissingBean(FencingWebExceptionHandler.class)
    FencingWebExceptionHandler fencingWebExceptionHandler() {
        return new FencingWebExceptionHandler();
    }

    /**
     * Every WebFlux application: a request starting on an event-loop thread where earlier work left a scope open
     * (a handler's {@code FencingContext.bind} never closed) has it closed first, logged and counted, so a reactive
     * fenced call it assembles there does not take that token as its caller's.
     */
    @Bean
    @ConditionalOnMissingBean(LeftBindingsWebFilter.class)
    LeftBindingsWebFilter fencingLeftBindingsWebFilter(ObjectProvider<MeterRegistry> registry) {
        return new LeftBindingsWebFilter().withMeterRegistry(registry.getIfUnique());
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ReactiveFencing.class)
    @Conditional(PathPatternsSet.class)
    static class TokenWebFilterConfiguration {

        @Bean
        @ConditionalOnMissingBean(FencingTokenWebFilter.class)
        FencingTokenWebFilter fencingTokenWebFilter(FencingProperties properties,
                                                    ObjectProvider<TokenVerifier> verifier,
                                                    ObjectProvider<MeterRegistry> registry,
                                                    ObjectProvider<RejectionListener> rejections,
                                                    ObjectProvider<FenceModes> modes) {
            // counts the tokens of writes that no check presented (fencing.tokens.received.unchecked)
            FencingTokenWebFilter filter = forPaths(properties.getWeb().getReactive().getPathPatterns())
                    .withMeterRegistry(registry.getIfUnique());
            TokenVerifier tokens = verifier.getIfUnique();
            if (tokens != null) {
                // refuses forged headers before the request runs (403), counted in fencing.checks as forged
                // and listed in the actuator's recent rejections
                filter = filter.verifying(tokens)
                        .withRejectionListener(RejectionListener.all(rejections.orderedStream().toList()))
                        .withModes(modes.getIfUnique());
            } else {
                // the R2DBC store has no bound on one advance
                UnsignedHeaders.warn("fencing.web.reactive.path-patterns",
                        properties.getWeb().getReactive().getPathPatterns(), false);
            }
            return filter;
        }
    }

    /**
     * No {@code fencing.web.reactive.path-patterns}: the application accepts callers' tokens nowhere, so a request that
     * carries the header is refused with 403 before it runs, as one outside the patterns is when they are set.
     * Ignored, its token would be set aside unseen by a {@code @Fenced(acquire = true)} method, which takes a lock of
     * its own and writes: a zombie's request would run.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ReactiveFencing.class)
    @ConditionalOnMissingBean(FencingTokenWebFilter.class)
    @Conditional(PathPatternsNotSet.class)
    static class RefusingTokenWebFilterConfiguration {

        @Bean
        FencingTokenWebFilter fencingTokenWebFilter() {
            return new FencingTokenWebFilter(exchange -> false);
        }
    }

    /**
     * No fencing-reactor, so no {@code FencingTokenWebFilter} (it binds tokens with it), and no path patterns (which
     * need it): a request carrying the header is refused with 403 all the same, as the token filter refusing every
     * path would refuse it. A blocking {@code @Fenced(acquire = true)} method called from a handler would otherwise
     * set the ignored token aside and write the request under a lock of its own.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingClass("dev.fencing.reactive.ReactiveFencing")
    @Conditional(PathPatternsNotSet.class)
    static class UnadmittedHeaderWithoutReactor {

        @Bean
        @ConditionalOnMissingBean(name = "fencingTokenWebFilter")
        UnadmittedHeaderWebFilter fencingTokenWebFilter() {
            return new UnadmittedHeaderWebFilter();
        }
    }

    /**
     * {@code fencing.web.reactive.path-patterns} set without fencing-reactor, which the filter binds tokens with: a
     * startup failure naming what to add, rather than a property silently ignored.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingClass("dev.fencing.reactive.ReactiveFencing")
    @Conditional(PathPatternsSet.class)
    static class TokenWebFilterWithoutReactor {

        TokenWebFilterWithoutReactor() {
            throw new FencingConfigurationException(PATH_PATTERNS + " is set, but the Fencing-Token WebFilter binds "
                    + "tokens into the Reactor Context with fencing-reactor, which is not on the class path: add the "
                    + "dependency dev.fencing:fencing-reactor (fencing-r2dbc brings it; its version from the "
                    + "fencing-bom), or remove " + PATH_PATTERNS);
        }
    }

    /**
     * The filter on {@code patterns}; a pattern that does not parse, or one that matches paths under any first
     * segment (the header would be accepted from any caller), fail startup naming the property and its value (the
     * filter's message says what to name instead). A pattern ending in {@code /*}, servlet syntax copied over, is
     * logged at WARN: in a {@code PathPattern} it matches one segment only.
     */
    static FencingTokenWebFilter forPaths(List<String> patterns) {
        FencingTokenWebFilter filter;
        try {
            filter = FencingTokenWebFilter.forPaths(patterns.toArray(String[]::new));
        } catch (IllegalArgumentException e) {
            throw new FencingConfigurationException(PATH_PATTERNS + " is " + patterns + ", which the Fencing-Token "
                    + "WebFilter refuses: " + e.getMessage(), e);
        }
        for (String pattern : patterns) {
            if (pattern.trim().endsWith("/*")) {
                String prefix = pattern.trim().substring(0, pattern.trim().length() - 2);
                log.warn(PATH_PATTERNS + " entry '" + pattern + "' matches one path segment only ('" + prefix
                        + "/a' but not '" + prefix + "/a/b'): WebFlux path patterns are not servlet patterns; '"
                        + prefix + "/**' matches everything below " + (prefix.isEmpty() ? "/" : prefix)
                        + ", and a request on a path no pattern matches that carries the Fencing-Token header gets "
                        + "403");
            }
        }
        return filter;
    }

    /** {@code fencing.web.reactive.path-patterns} holds at least one pattern (comma-separated or indexed). */
    static final class PathPatternsNotSet extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            ConditionOutcome set = new PathPatternsSet().getMatchOutcome(context, metadata);
            return set.isMatch() ? ConditionOutcome.noMatch(set.getMessage())
                    : ConditionOutcome.match(set.getMessage());
        }
    }

    static final class PathPatternsSet extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            List<String> patterns = Binder.get(context.getEnvironment())
                    .bind(PATH_PATTERNS, Bindable.listOf(String.class)).orElse(List.of());
            return patterns.isEmpty()
                    ? ConditionOutcome.noMatch(PATH_PATTERNS + " is not set: callers' tokens are accepted nowhere")
                    : ConditionOutcome.match(PATH_PATTERNS + " is " + patterns);
        }
    }
}
