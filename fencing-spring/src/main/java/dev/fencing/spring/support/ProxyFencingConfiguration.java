package dev.fencing.spring.support;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;

/**
 * Internal: imported by {@code @EnableFencing} in PROXY mode, not for applications. One infrastructure advisor
 * whose interceptor delegates to the shared {@link FencingSupport}. The infrastructure auto-proxy creator creates
 * the advisor while bean post-processors are still being registered; it depends on nothing of the application's
 * (the support resolves its collaborators on first use).
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
class ProxyFencingConfiguration extends FencingSupportConfiguration {

    @Bean(name = "dev.fencing.internalFencingAdvisor")
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    FencingAdvisor fencingAdvisor(FencingSupport fencingSupport) {
        FencingAdvisor advisor = new FencingAdvisor(fencingSupport);
        advisor.setOrder(enableFencing.getNumber("order").intValue());
        return advisor;
    }
}
