package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.etcd.EtcdTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.List;

/**
 * With {@code fencing.issuer.type=etcd} and fencing-etcd on the classpath: an {@link EtcdTokenIssuer} on the
 * application's jetcd {@link Client} bean when it has one, otherwise on a client the starter creates for
 * {@code fencing.issuer.etcd.endpoints} (and closes on shutdown). Backs off when the application defines its own
 * {@link TokenIssuer}.
 */
@AutoConfiguration(after = FencingAutoConfiguration.class)
@ConditionalOnClass({EtcdTokenIssuer.class, Client.class})
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
@ConditionalOnFencingType(issuer = FencingProperties.IssuerType.ETCD)
@EnableConfigurationProperties(FencingProperties.class)
public class FencingEtcdAutoConfiguration {

    static final String ENDPOINTS = FencingProperties.ETCD_ENDPOINTS;

    /** The name of the jetcd client the starter creates when the application has none. */
    static final String STARTERS_CLIENT = "fencingEtcdClient";

    @Bean
    @ConditionalOnMissingBean(TokenIssuer.class)
    EtcdTokenIssuer tokenIssuer(Client etcd, FencingProperties properties, ObjectProvider<MeterRegistry> registry,
                                ListableBeanFactory beans) {
        FencingProperties.EtcdIssuer settings = properties.getIssuer().getEtcd();
        if (!beans.containsBean(STARTERS_CLIENT) && settings.getEndpoints().stream().anyMatch(e -> !e.isBlank())) {
            // jetcd does not tell its endpoints: a property beside the application's client is ambiguous
            throw new FencingConfigurationException(ENDPOINTS + " is " + settings.getEndpoints() + ", but the issuer "
                    + "uses the application's jetcd Client bean, whose endpoints the starter cannot read: the "
                    + "property would be ignored (and named in the issuer's messages and health), and instances "
                    + "configured through it alone would lock on another cluster. Remove the property (the bean "
                    + "wins), or the bean");
        }
        List<String> used = endpoints(properties);
        String endpoints = used.isEmpty() ? "the application's etcd Client" : String.join(",", used);
        return new EtcdTokenIssuer(etcd, endpoints, settings.getLockPrefix(), settings.getLeaseTtl(),
                registry.getIfUnique());
    }

    /** The endpoints as the client is built with them: trimmed, empty entries (a trailing comma) dropped. */
    static List<String> endpoints(FencingProperties properties) {
        return properties.getIssuer().getEtcd().getEndpoints().stream()
                .map(String::trim).filter(endpoint -> !endpoint.isEmpty()).toList();
    }

    /** The jetcd client, when the application has none. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingBean(Client.class)
    static class ClientConfiguration {

        @Bean(destroyMethod = "close")
        Client fencingEtcdClient(FencingProperties properties) {
            List<String> endpoints = endpoints(properties);
            if (endpoints.isEmpty()) {
                throw new FencingConfigurationException("fencing.issuer.type=etcd needs the etcd endpoints: set "
                        + ENDPOINTS + " (e.g. http://etcd1:2379,http://etcd2:2379), or define a jetcd Client bean, "
                        + "which the issuer then uses");
            }
            return clientBuilder(endpoints).build();
        }

        /**
         * A client whose failed requests are retried by the issuer, not by jetcd ({@code retryMaxAttempts(0)}): the
         * issuer retries transient errors of its session grant, lock requests and reads until the acquire's timeout,
         * and watches the key of a lock it had to request again (a late delete by the failed request's handler marks
         * the lease lost); a retry inside jetcd would be invisible to it.
         */
        static ClientBuilder clientBuilder(List<String> endpoints) {
            return Client.builder().endpoints(endpoints.toArray(String[]::new)).retryMaxAttempts(0);
        }
    }
}
