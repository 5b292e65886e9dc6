package dev.fencing.aspectj;

import dev.fencing.spring.support.FencingSupport;
import org.aspectj.lang.Aspects;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;

/**
 * Internal: imported by {@code @EnableFencing(mode = ASPECTJ)} (named by class name from fencing-spring, beside the
 * configuration of the shared {@link FencingSupport} and the startup validator), not for applications. Configures
 * the woven {@link FencingAspect} singleton with this context's {@link FencingSupport} and detaches it when the
 * context closes; a second context started while one is bound fails ({@link FencingAspect#bind}). No advisor, no
 * proxy.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
class AspectJFencingConfiguration {

    @Bean(name = "dev.fencing.internalFencingAspectBinding")
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    AspectBinding fencingAspectBinding(FencingSupport fencingSupport) {
        FencingAspect aspect = Aspects.aspectOf(FencingAspect.class);
        aspect.bind(fencingSupport);
        return new AspectBinding(aspect, fencingSupport);
    }

    /** Keeps the aspect bound to this context's support while the context lives. */
    record AspectBinding(FencingAspect aspect, FencingSupport support) implements DisposableBean {
        @Override
        public void destroy() {
            aspect.detach(support);
        }
    }
}
