package dev.fencing.boot.autoconfigure;

import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.web.reactive.FencingTokenExchangeFilterFunction;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code WebClient} side of fencing-web, as {@link FencingRestClientAutoConfiguration} is the {@code RestClient}
 * side: a {@link WebClientCustomizer} that adds a {@link FencingTokenExchangeFilterFunction} to the
 * {@code WebClient.Builder}s Boot builds, sending the tokens of the Reactor Context (else the subscribing thread's)
 * only to the hosts {@code fencing.web.client.propagate-to} names, and turning those hosts' fencing refusals into the
 * library's exceptions as error signals, counted in {@code fencing.remote.rejections} on the application's
 * {@link MeterRegistry} when it has one. No hosts, no customizer. In servlet and reactive applications alike.
 */
@AutoConfiguration(after = {FencingAutoConfiguration.class, FencingPropagateToAutoConfiguration.class,
        FencingRestClientAutoConfiguration.class})
@ConditionalOnClass({FencingTokenExchangeFilterFunction.class, WebClientCustomizer.class})
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
@Conditional(FencingRestClientAutoConfiguration.PropagateToSet.class)
@EnableConfigurationProperties(FencingProperties.class)
public class FencingWebClientAutoConfiguration {

    private static final Log log = LogFactory.getLog(FencingWebClientAutoConfiguration.class);

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ReactiveFencing.class)
    static class CustomizerConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "fencingWebClientCustomizer")
        WebClientCustomizer fencingWebClientCustomizer(PropagateToHosts hosts, ObjectProvider<MeterRegistry> registry,
                                                       org.springframework.core.env.Environment environment) {
            hosts.warnOfRedirects(environment);
            FencingTokenExchangeFilterFunction filter = FencingTokenExchangeFilterFunction.forHosts(hosts.hosts())
                    .withMeterRegistry(registry.getIfUnique());
            return builder -> builder.apply(filter); // the filter, and the record of the thread building each request
        }
    }

    /**
     * WebClient without fencing-reactor: the filter function reads tokens with it, so Boot's WebClients send none; said
     * at startup (not a failure: the property serves RestClient too, and WebFlux may be on a servlet application's
     * class path for other reasons).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingClass("dev.fencing.reactive.ReactiveFencing")
    static class WithoutReactor {

        WithoutReactor() {
            log.warn(FencingRestClientAutoConfiguration.PROPAGATE_TO + " is set, but Boot's WebClient.Builder sends "
                    + "no tokens: the WebClient filter function needs fencing-reactor, which is not on the class path "
                    + "(add dev.fencing:fencing-reactor if the application calls fenced services with WebClient)");
        }
    }
}
