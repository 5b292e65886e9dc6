package dev.fencing.spring;

import dev.fencing.attribute.FencingSupport;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;

/** PROXY mode: one infrastructure advisor whose interceptor delegates to the shared {@link FencingSupport}. */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
public class ProxyFencingConfiguration extends AbstractFencingConfiguration {

    @Bean(name = "dev.fencing.internalFencingAdvisor")
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    public FencingAdvisor fencingAdvisor(FencingSupport fencingSupport) {
        FencingAdvisor advisor = new FencingAdvisor(fencingSupport);
        advisor.setOrder(enableFencing.getNumber("order").intValue());
        return advisor;
    }
}
