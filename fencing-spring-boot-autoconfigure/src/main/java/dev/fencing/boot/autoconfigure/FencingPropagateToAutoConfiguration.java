package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.web.FencingTokenClientInterceptor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.io.ResourceLoader;
import org.springframework.util.ClassUtils;

/**
 * {@code fencing.web.client.propagate-to}, whatever HTTP client support the application has: its entries are checked
 * and its hosts logged at startup ({@link PropagateToHosts}), and when neither Boot's {@code RestClient} support nor
 * its {@code WebClient} support is on the class path, startup fails, since no client would send a token to those
 * hosts (the property was silently ignored). The client auto-configurations add the interceptor and the filter
 * function with these hosts.
 */
@AutoConfiguration(after = FencingAutoConfiguration.class,
        before = {FencingRestClientAutoConfiguration.class, FencingWebClientAutoConfiguration.class})
@ConditionalOnClass(FencingTokenClientInterceptor.class)
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
@Conditional(FencingRestClientAutoConfiguration.PropagateToSet.class)
@EnableConfigurationProperties(FencingProperties.class)
public class FencingPropagateToAutoConfiguration {

    static final String REST_CLIENT_SUPPORT = "org.springframework.boot.restclient.RestClientCustomizer";
    static final String WEB_CLIENT_SUPPORT = "org.springframework.boot.webclient.WebClientCustomizer";

    @Bean
    @ConditionalOnMissingBean
    PropagateToHosts fencingPropagateToHosts(FencingProperties properties, ResourceLoader resources) {
        PropagateToHosts hosts = new PropagateToHosts(properties.getWeb().getClient().getPropagateTo());
        ClassLoader loader = resources.getClassLoader();
        if (!ClassUtils.isPresent(REST_CLIENT_SUPPORT, loader) && !ClassUtils.isPresent(WEB_CLIENT_SUPPORT, loader)) {
            throw new FencingConfigurationException(FencingRestClientAutoConfiguration.PROPAGATE_TO + " is set ("
                    + hosts.hosts() + "), but neither Boot's RestClient support nor its WebClient support is on the "
                    + "class path, so no client would send tokens to those hosts. Add "
                    + "org.springframework.boot:spring-boot-starter-restclient (RestClient, RestTemplate) or "
                    + "spring-boot-starter-webclient (WebClient) and build the clients from Boot's builders, or "
                    + "remove the property");
        }
        return hosts;
    }
}
