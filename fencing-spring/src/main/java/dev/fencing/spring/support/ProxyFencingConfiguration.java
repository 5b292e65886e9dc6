package dev.fencing.spring.support;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.framework.ProxyConfig;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;

/**
 * Internal: imported by {@code @EnableFencing} in PROXY mode, not for applications. Two infrastructure advisors,
 * one for checking and one for acquiring fence points, each ordered on its own, whose interceptors delegate to the
 * shared {@link FencingSupport}. The infrastructure auto-proxy creator creates
 * the advisor while bean post-processors are still being registered; it depends on nothing of the application's
 * (the support resolves its collaborators on first use).
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
class ProxyFencingConfiguration extends FencingSupportConfiguration {

    /** The bean name of the acquiring points' advisor. */
    static final String ACQUIRE_ADVISOR = "dev.fencing.internalFencingAcquireAdvisor";

    /** The checking points' advisor: inside {@code @Transactional}, so the check is atomic with the write. */
    @Bean(name = "dev.fencing.internalFencingAdvisor")
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    FencingAdvisor fencingAdvisor(FencingSupport fencingSupport, ConfigurableListableBeanFactory beanFactory) {
        FencingAdvisor advisor = new FencingAdvisor(fencingSupport, false, () -> classProxies(beanFactory));
        advisor.setOrder(enableFencing.getNumber("order").intValue());
        return advisor;
    }

    /** The acquiring points' advisor: outside {@code @Transactional} by default, so the lock spans the transaction. */
    @Bean(name = ACQUIRE_ADVISOR)
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    FencingAdvisor fencingAcquireAdvisor(FencingSupport fencingSupport, ConfigurableListableBeanFactory beanFactory) {
        FencingAdvisor advisor = new FencingAdvisor(fencingSupport, true, () -> classProxies(beanFactory));
        advisor.setOrder(enableFencing.getNumber("acquireOrder").intValue());
        return advisor;
    }

    /**
     * Outermost, for the checking points that return a reactive type: each subscription after the first runs the
     * chain again, so an interceptor outside the fence that proceeds once per subscription (Spring's reactive
     * {@code @Transactional}) still reaches the fence on a {@code retry()}.
     */
    @Bean(name = "dev.fencing.internalFencingResubscribeAdvisor")
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    ResubscribingAdvisor fencingResubscribeAdvisor(FencingSupport fencingSupport) {
        return new ResubscribingAdvisor(fencingSupport.resolutions());
    }

    /**
     * Whether the auto-proxy creator subclasses every bean ({@code proxyTargetClass}: Spring Boot's default, or
     * {@code @EnableFencing(proxyTargetClass = true)}): asked while it matches a bean, when it exists.
     */
    static boolean classProxies(ConfigurableListableBeanFactory beanFactory) {
        return beanFactory.containsSingleton(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME)
                && beanFactory.getSingleton(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME) instanceof ProxyConfig config
                && config.isProxyTargetClass();
    }
}
