package dev.fencing.aspectj;

import dev.fencing.FencingConfigurationException;
import dev.fencing.spring.EnableFencing;
import dev.fencing.spring.support.FencingSupport;
import org.aspectj.lang.Aspects;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.util.ClassUtils;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * Internal: imported by {@code @EnableFencing(mode = ASPECTJ)} (named by class name from fencing-spring, beside the
 * configuration of the shared {@link FencingSupport} and the startup validator), not for applications. Configures
 * the woven {@link FencingAspect} singleton with this context's {@link FencingSupport} and detaches it when the
 * context closes; a second context started while one is bound fails ({@link FencingAspect#bind}). No advisor, no
 * proxy: a context that also declares {@code @EnableFencing} in PROXY mode fails, as its advisor would proxy the woven
 * beans and fence each of their calls a second time.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
class AspectJFencingConfiguration {

    @Bean(name = "dev.fencing.internalFencingAspectBinding")
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    AspectBinding fencingAspectBinding(FencingSupport fencingSupport, ListableBeanFactory beanFactory) {
        if (beanFactory.containsBeanDefinition(PROXY_ADVISOR)) {
            throw new FencingConfigurationException("@EnableFencing is declared in both modes in this context ("
                    + declarations(beanFactory) + "): the PROXY mode's advisor would proxy each woven bean and the "
                    + "woven aspect fence it too, checking each call twice; declare @EnableFencing once, with mode = "
                    + "AdviceMode.ASPECTJ when you weave");
        }
        FencingAspect aspect = Aspects.aspectOf(FencingAspect.class);
        aspect.bind(fencingSupport);
        return new AspectBinding(aspect, fencingSupport);
    }

    /** The bean name of the PROXY mode's checking advisor (fencing-spring's ProxyFencingConfiguration). */
    private static final String PROXY_ADVISOR = "dev.fencing.internalFencingAdvisor";

    /** The classes declaring {@code @EnableFencing}, each with its mode: {@code com.example.Config (mode PROXY)}. */
    private static String declarations(ListableBeanFactory beanFactory) {
        return Arrays.stream(beanFactory.getBeanNamesForAnnotation(EnableFencing.class))
                .map(name -> {
                    Class<?> type = beanFactory.getType(name, false);
                    EnableFencing enable = beanFactory.findAnnotationOnBean(name, EnableFencing.class, false);
                    return (type == null ? name : ClassUtils.getUserClass(type).getName())
                            + " (mode " + (enable == null ? "?" : enable.mode()) + ")";
                })
                .sorted().collect(Collectors.joining(", "));
    }

    /**
     * Keeps the aspect bound to this context's support while the context lives. A (no-op) post-processor, so that
     * the context creates it, and binds the aspect, with its post-processors, before any ordinary bean: a bean that
     * makes a fenced write while it is created finds the aspect configured, as PROXY mode's advisor exists by then.
     * The support resolves its store and issuer on first use, so binding it early creates nothing of the
     * application's.
     */
    record AspectBinding(FencingAspect aspect, FencingSupport support) implements DisposableBean, BeanPostProcessor {
        @Override
        public void destroy() {
            aspect.detach(support);
        }
    }
}
