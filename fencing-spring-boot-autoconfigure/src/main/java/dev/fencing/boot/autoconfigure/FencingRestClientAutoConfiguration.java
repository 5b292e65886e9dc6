package dev.fencing.boot.autoconfigure;

import dev.fencing.web.FencingTokenClientInterceptor;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.type.AnnotatedTypeMetadata;

import java.util.List;

/**
 * The client side of fencing-web: a {@link RestClientCustomizer} that adds a {@link FencingTokenClientInterceptor}
 * to the {@code RestClient.Builder}s Boot builds (and a {@link RestTemplateCustomizer} to the {@code RestTemplate}s
 * its {@code RestTemplateBuilder} builds), sending the bound tokens only to the hosts
 * {@code fencing.web.client.propagate-to} names. No hosts, no customizer: a token tells whoever receives it which lock
 * its holder has, so it goes only where it is checked.
 *
 * <p>On the requests to those hosts the interceptor also turns the remote service's fencing refusals (the problem
 * details of {@code FencingExceptionAdvice}) into {@code StaleTokenException}, {@code DuplicateTokenException} or
 * {@code MissingTokenException}, and counts them in {@code fencing.remote.rejections} on the application's
 * {@link MeterRegistry} when it has one.
 */
@AutoConfiguration(after = {FencingAutoConfiguration.class, FencingPropagateToAutoConfiguration.class})
@ConditionalOnClass({FencingTokenClientInterceptor.class, RestClientCustomizer.class})
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
@Conditional(FencingRestClientAutoConfiguration.PropagateToSet.class)
@EnableConfigurationProperties(FencingProperties.class)
public class FencingRestClientAutoConfiguration {

    static final String PROPAGATE_TO = "fencing.web.client.propagate-to";

    @Bean
    @ConditionalOnMissingBean(name = "fencingRestClientCustomizer")
    RestClientCustomizer fencingRestClientCustomizer(PropagateToHosts hosts, ObjectProvider<MeterRegistry> registry,
                                                     org.springframework.core.env.Environment environment) {
        hosts.warnOfRedirects(environment);
        FencingTokenClientInterceptor interceptor = FencingTokenClientInterceptor.forHosts(hosts.hosts())
                .withMeterRegistry(registry.getIfUnique());
        return builder -> builder.requestInterceptor(interceptor);
    }

    /**
     * The same for the {@code RestTemplate}s built from Boot's {@code RestTemplateBuilder}: the check of the property
     * promises RestTemplate with Boot's client support, and a template without the interceptor sends no token (every
     * fenced call it makes is refused as missing) and leaves the callee's refusals unmapped.
     */
    @Bean
    @ConditionalOnMissingBean(name = "fencingRestTemplateCustomizer")
    RestTemplateCustomizer fencingRestTemplateCustomizer(PropagateToHosts hosts,
                                                         ObjectProvider<MeterRegistry> registry) {
        FencingTokenClientInterceptor interceptor = FencingTokenClientInterceptor.forHosts(hosts.hosts())
                .withMeterRegistry(registry.getIfUnique());
        return template -> template.getInterceptors().add(interceptor);
    }

    /** {@code fencing.web.client.propagate-to} holds at least one host (comma-separated or indexed). */
    static final class PropagateToSet extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            List<String> hosts = Binder.get(context.getEnvironment())
                    .bind(PROPAGATE_TO, Bindable.listOf(String.class)).orElse(List.of());
            return hosts.isEmpty()
                    ? ConditionOutcome.noMatch(PROPAGATE_TO + " is not set: tokens are sent to no host")
                    : ConditionOutcome.match(PROPAGATE_TO + " is " + hosts);
        }
    }
}
