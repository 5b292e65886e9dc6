package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.PriorityOrdered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * PROXY mode: a bean with {@code @Fenced} methods that is created before the auto-proxy creator (a dependency of a
 * {@code BeanPostProcessor}: Spring logs that it "is not eligible for getting processed by all BeanPostProcessors")
 * is never proxied, so its calls would run unchecked. As a plain singleton, startup fails naming it; made by a
 * {@code FactoryBean} (as every Spring Data repository is), it fails startup the same way, the factory's product
 * checked as the object it made.
 */
@Timeout(30)
class EarlyFactoryBeanProductTest {

    /** Builds the ledger, as a repository factory bean builds a repository. */
    static class LedgerFactoryBean implements FactoryBean<Fixtures.Ledger> {
        @Override
        public Fixtures.Ledger getObject() {
            return new Fixtures.Ledger();
        }

        @Override
        public Class<?> getObjectType() {
            return Fixtures.Ledger.class;
        }
    }

    /** An application's post-processor (auditing, say) that needs the ledger: created with it, early. */
    static class AuditingPostProcessor implements BeanPostProcessor, PriorityOrdered {
        AuditingPostProcessor(Fixtures.Ledger ledger) {
        }

        @Override
        public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
            return bean;
        }

        @Override
        public int getOrder() {
            return 0;
        }
    }

    @Configuration
    @EnableFencing
    static class PlainSingleton {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        static Fixtures.Ledger ledger() {
            return new Fixtures.Ledger();
        }

        @Bean
        static AuditingPostProcessor auditing(Fixtures.Ledger ledger) {
            return new AuditingPostProcessor(ledger);
        }
    }

    @Configuration
    @EnableFencing
    static class FactoryProduct {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        static LedgerFactoryBean ledger() {
            return new LedgerFactoryBean();
        }

        @Bean
        static AuditingPostProcessor auditing(Fixtures.Ledger ledger) {
            return new AuditingPostProcessor(ledger);
        }
    }

    @Configuration
    @EnableFencing
    static class OrdinaryFactoryProduct {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        static LedgerFactoryBean ledger() {
            return new LedgerFactoryBean();
        }
    }

    /** The same factory, its product made after the auto-proxy creator: proxied, and startup goes on. */
    @Test
    void anOrdinaryFactoryBeanProductStarts() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
                OrdinaryFactoryProduct.class)) {
            assertThat(AopUtils.isAopProxy(context.getBean(Fixtures.Ledger.class))).isTrue();
        }
    }

    @Test
    void anEarlyPlainSingletonFailsStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(PlainSingleton.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("not a proxy running the fence advisor");
    }

    @Test
    void anEarlyFactoryBeanProductFailsStartupToo() {
        assertThatThrownBy(() -> {
            try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
                    FactoryProduct.class)) {
                Fixtures.Ledger ledger = context.getBean(Fixtures.Ledger.class);
                // what a started context would do: the write lands with no token bound, unchecked
                ledger.append("unchecked, proxy=" + AopUtils.isAopProxy(ledger));
                throw new AssertionError("started, and the unproxied ledger wrote with no token: " + ledger.entries);
            }
        }).isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("not a proxy running the fence advisor");
    }
}
