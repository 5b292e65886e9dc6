package dev.fencing.boot.autoconfigure;

import dev.fencing.guard.RejectionListener;
import dev.fencing.mode.FenceModes;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.web.FencingExceptionAdvice;
import dev.fencing.web.FencingTokenFilter;
import dev.fencing.web.LeftBindingsFilter;
import dev.fencing.web.UnadmittedTokenFilter;
import dev.fencing.web.UnadmittedTokenInterceptor;
import dev.fencing.web.internal.ServletUrlPatterns;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.DispatcherType;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

import java.util.List;

/**
 * The HTTP parts of fencing-web in a servlet application: {@link FencingExceptionAdvice} (refused calls as problem
 * details) unless the application registered it, and the {@link FencingTokenFilter} that binds callers' tokens only
 * when {@code fencing.web.filter.url-patterns} names where callers are trusted (no default). With a
 * {@link TokenVerifier} bean (the {@code fencing.signing.*} properties make one) the filter also refuses unsigned or
 * badly signed tokens before the request runs. On every request: {@link UnadmittedTokenInterceptor} (a header no
 * filter admitted is refused) and {@link LeftBindingsFilter} (a scope a request left open is closed).
 */
@AutoConfiguration(after = FencingAutoConfiguration.class)
@ConditionalOnClass(FencingExceptionAdvice.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
@EnableConfigurationProperties(FencingProperties.class)
public class FencingWebAutoConfiguration {

    static final String URL_PATTERNS = "fencing.web.filter.url-patterns";

    /**
     * The WebFlux filter's paths set in a servlet application: nothing reads them here, and the header would be
     * refused on every path they were meant to open; startup fails naming the property this stack reads.
     */
    @Bean
    static SmartInitializingSingleton fencingOtherWebStackCheck(Environment environment) {
        return () -> {
            if (Binder.get(environment).bind(FencingWebFluxAutoConfiguration.PATH_PATTERNS,
                    Bindable.listOf(String.class)).isBound()) {
                throw new dev.fencing.FencingConfigurationException(FencingWebFluxAutoConfiguration.PATH_PATTERNS
                        + " is set, but this is a servlet application, whose Fencing-Token filter reads " + URL_PATTERNS
                        + " (servlet patterns such as /internal/*): nothing reads the property set, and the header "
                        + "would be refused on those paths");
            }
        };
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingBean(FencingExceptionAdvice.class)
    @Import(FencingExceptionAdvice.class)
    static class ExceptionAdviceConfiguration {
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(FilterRegistrationBean.class)
    @Conditional(UrlPatternsSet.class)
    static class TokenFilterConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "fencingTokenFilter")
        FilterRegistrationBean<FencingTokenFilter> fencingTokenFilter(FencingProperties properties,
                                                                      ObjectProvider<TokenVerifier> verifier,
                                                                      ObjectProvider<MeterRegistry> registry,
                                                                      ObjectProvider<RejectionListener> rejections,
                                                                      ObjectProvider<FenceModes> modes) {
            List<String> patterns = properties.getWeb().getFilter().getUrlPatterns();
            for (String pattern : patterns) {
                requireServletPattern(pattern);
            }
            // trusts the patterns themselves, not the container's account of its mapping: MockMvc registers
            // filters without their patterns (and applies the patterns itself)
            // counts the tokens of writes that no check presented (fencing.tokens.received.unchecked)
            FencingTokenFilter filter = FencingTokenFilter.forUrlPatterns(patterns)
                    .withMeterRegistry(registry.getIfUnique());
            TokenVerifier tokens = verifier.getIfUnique();
            if (tokens != null) {
                // refuses forged headers before the request runs (403), counted in fencing.checks as forged
                // and listed in the actuator's recent rejections
                filter = filter.verifying(tokens)
                        .withRejectionListener(RejectionListener.all(rejections.orderedStream().toList()))
                        .withModes(modes.getIfUnique());
            } else {
                UnsignedHeaders.warn("fencing.web.filter.url-patterns", patterns, true);
            }
            FilterRegistrationBean<FencingTokenFilter> registration = new FilterRegistrationBean<>(filter);
            registration.setUrlPatterns(patterns);
            return registration;
        }
    }

    /**
     * Before every Spring MVC handler: a request carrying the {@code Fencing-Token} header that no token filter
     * admitted (its path is not in {@code fencing.web.filter.url-patterns}, or none is set) is refused with 403, as the
     * WebFlux filter refuses it. Ignored, the header's token would be set aside unseen by a {@code @Fenced(acquire =
     * true)} method, which takes a lock of its own and writes. A handler mapping that does not run it (a
     * {@code WebMvcConfigurationSupport} subclass of the application ignores {@code WebMvcConfigurer} beans) fails
     * startup: fencing-web's check, run by {@code @EnableFencing}'s validation with or without Boot, names the mapping
     * and, seeing this bean, the fix for a Boot application.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(WebMvcConfigurer.class)
    static class UnadmittedTokenConfiguration {

        @Bean
        WebMvcConfigurer fencingUnadmittedTokenInterceptor(Environment environment) {
            List<String> patterns = urlPatterns(environment);
            UnadmittedTokenInterceptor interceptor = new UnadmittedTokenInterceptor(where(patterns), patterns);
            return new WebMvcConfigurer() {
                @Override
                public void addInterceptors(InterceptorRegistry registry) {
                    registry.addInterceptor(interceptor);
                }
            };
        }
    }

    /**
     * On every path: a request for a servlet other than Spring MVC's (registered by hand, Jersey) carrying the header
     * on a path the token filter is not mapped to is refused with 403, as the interceptor refuses it on Spring MVC's
     * (a trial's zombie header to a servlet of its own was set aside, and an acquiring method wrote the request).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(FilterRegistrationBean.class)
    static class UnadmittedTokenFilterConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "fencingUnadmittedTokenFilter")
        FilterRegistrationBean<UnadmittedTokenFilter> fencingUnadmittedTokenFilter(Environment environment) {
            List<String> patterns = urlPatterns(environment);
            FilterRegistrationBean<UnadmittedTokenFilter> registration =
                    new FilterRegistrationBean<>(new UnadmittedTokenFilter(where(patterns), patterns));
            registration.setOrder(LeftBindingsFilter.ORDER + 1);
            registration.setDispatcherTypes(DispatcherType.REQUEST);
            return registration;
        }
    }

    static List<String> urlPatterns(Environment environment) {
        return Binder.get(environment).bind(URL_PATTERNS, Bindable.listOf(String.class)).orElse(List.of());
    }

    /** Where the application accepts the header, for the refusals' detail. */
    static String where(List<String> patterns) {
        return patterns.isEmpty() ? "this application accepts it on no path (" + URL_PATTERNS + " is not set)"
                : "this application accepts it only on " + String.join(", ", patterns) + " (" + URL_PATTERNS + ")";
    }

    /**
     * On every path, first: a request that left a fencing scope open on its thread has it closed and named at ERROR,
     * so the next request on that pooled thread does not write under its tokens.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(FilterRegistrationBean.class)
    static class LeftBindingsConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "fencingLeftBindingsFilter")
        FilterRegistrationBean<LeftBindingsFilter> fencingLeftBindingsFilter(ObjectProvider<MeterRegistry> registry) {
            FilterRegistrationBean<LeftBindingsFilter> registration =
                    new FilterRegistrationBean<>(new LeftBindingsFilter().withMeterRegistry(registry.getIfUnique()));
            registration.setOrder(LeftBindingsFilter.ORDER);
            registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ASYNC, DispatcherType.ERROR);
            return registration;
        }
    }

    /**
     * The filter is mapped with servlet URL patterns, which know {@code /path/*}, {@code *.ext}, exact paths and
     * {@code /}; anything else (Spring's {@code /internal/**}) would match nothing, or one path only, and callers'
     * headers would be ignored everywhere: a startup failure instead, naming the value and the fix.
     */
    static void requireServletPattern(String pattern) {
        ServletUrlPatterns.require(pattern, URL_PATTERNS);
    }

    /** {@code fencing.web.filter.url-patterns} holds at least one pattern (comma-separated or indexed). */
    static final class UrlPatternsSet extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            List<String> patterns = urlPatterns(context.getEnvironment());
            return patterns.isEmpty()
                    ? ConditionOutcome.noMatch(URL_PATTERNS + " is not set: callers' tokens are accepted nowhere")
                    : ConditionOutcome.match(URL_PATTERNS + " is " + patterns);
        }
    }
}
