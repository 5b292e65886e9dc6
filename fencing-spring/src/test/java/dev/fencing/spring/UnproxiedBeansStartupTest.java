package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import dev.fencing.context.MissingTokenException;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Scope;
import org.springframework.context.annotation.ScopedProxyMode;
import org.springframework.context.support.SimpleThreadScope;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A bean whose {@code @Fenced} methods Spring's auto-proxy creator never sees would run every call unchecked: one
 * that implements {@code AopInfrastructureBean} (Spring never proxies those) and a singleton registered by hand fail
 * startup naming the bean (a trial's calls of both wrote with no token bound). A scoped proxy is not one of them: its
 * target, created per scope, is proxied then.
 */
@Timeout(30)
class UnproxiedBeansStartupTest {

    /** A repository that is, by a base class of its own, AOP infrastructure. */
    static class InfrastructureLedger extends Fixtures.Ledger implements AopInfrastructureBean {
    }

    @Configuration
    @EnableFencing
    static class Infrastructure {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        InfrastructureLedger infrastructureLedger() {
            return new InfrastructureLedger();
        }
    }

    @Configuration
    @EnableFencing
    static class RegisteredByHand {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        static BeanFactoryPostProcessor registersALedger() {
            return beanFactory -> beanFactory.registerSingleton("handLedger", new Fixtures.Ledger());
        }
    }

    @Configuration
    @EnableFencing
    static class ThreadScoped {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        static BeanFactoryPostProcessor threadScope() {
            return beanFactory -> beanFactory.registerScope("thread", new SimpleThreadScope());
        }

        @Bean
        @Scope(value = "thread", proxyMode = ScopedProxyMode.TARGET_CLASS)
        Fixtures.Ledger scopedLedger() {
            return new Fixtures.Ledger();
        }
    }

    @Test
    void anAopInfrastructureBeanWithFencedMethodsFailsStartupNamingIt() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(Infrastructure.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("bean 'infrastructureLedger', which is not a proxy running the fence advisor")
                .hasMessageContaining("AopInfrastructureBean");
    }

    @Test
    void aSingletonRegisteredByHandWithFencedMethodsFailsStartupNamingIt() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(RegisteredByHand.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("bean 'handLedger', which is not a proxy running the fence advisor")
                .hasMessageContaining("registerSingleton");
    }

    @Test
    void aScopedProxyStartsAndItsTargetIsFenced() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(ThreadScoped.class)) {
            Fixtures.Ledger ledger = context.getBean("scopedLedger", Fixtures.Ledger.class);
            assertThatThrownBy(() -> ledger.append("unchecked")).isInstanceOf(MissingTokenException.class);
            assertThat(context.getBean(InMemoryFenceStore.class)).isNotNull();
        }
    }
}
