package dev.fencing.boot.autoconfigure;

import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.web.reactive.FencingTokenExchangeFilterFunction;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * The {@code WebClient} side of fencing-web, as {@link FencingRestClientAutoConfiguration} is the {@code RestClient}
 * side: a {@link WebClientCustomizer} that adds a {@link FencingTokenExchangeFilterFunction} to the
 * {@code WebClient.Builder}s Boot builds, sending the tokens of the Reactor Context (else the subscribing thread's)
 * only to the hosts {@code fencing.web.client.propagate-to} names, and turning those hosts' fencing refusals into the
 * library's exceptions as error signals, counted in {@code fencing.remote.rejections} on the application's
 * {@link MeterRegistry} when it has one. No hosts, no customizer. In servlet and reactive applications alike.
 */
@AutoConfiguration(after = FencingAutoConfiguration.class)
@ConditionalOnClass({FencingTokenExchangeFilterFunction.class, ReactiveFencing.class, WebClientCustomizer.class})
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
@Conditional(FencingRestClientAutoConfiguration.PropagateToSet.class)
@EnableConfigurationProperties(FencingProperties.class)
public class FencingWebClientAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "fencingWebClientCustomizer")
    WebClientCustomizer fencingWebClientCustomizer(FencingProperties properties,
                                                   ObjectProvider<MeterRegistry> registry) {
        FencingTokenExchangeFilterFunction filter =
                FencingTokenExchangeFilterFunction.forHosts(properties.getWeb().getClient().getPropagateTo())
                        .withMeterRegistry(registry.getIfUnique());
        return builder -> builder.filter(filter);
    }
}
