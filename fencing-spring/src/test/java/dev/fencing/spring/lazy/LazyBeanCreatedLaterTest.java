package dev.fencing.spring.lazy;

import dev.fencing.FencingConfigurationException;
import dev.fencing.context.FencingContext;
import dev.fencing.spring.EnableFencing;
import dev.fencing.spring.elsewhere.Accounts;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A {@code @Lazy} bean declared by an interface whose implementation lies outside the packages startup reads (here
 * {@code dev.fencing.spring.elsewhere}, beside none of the configuration's): startup cannot see its class without
 * creating it, so its {@code @Fenced} methods are checked when it is created, and a problem fails its creation, each
 * time, before it serves a call; a correct one is created, proxied and fenced.
 */
@Timeout(30)
class LazyBeanCreatedLaterTest {

    @Configuration(proxyBeanMethods = false)
    @EnableFencing(allowInMemoryStore = true)
    static class MisspeltConfig {
        @Bean
        @Lazy
        Accounts accounts() {
            return new Accounts.Misspelt();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableFencing(allowInMemoryStore = true)
    static class CorrectConfig {
        @Bean
        @Lazy
        Accounts accounts() {
            return new Accounts.Correct();
        }
    }

    @Test
    void aProblemOfALazyBeanFailsItsCreationEachTime() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
                MisspeltConfig.class)) {
            for (int attempt = 0; attempt < 2; attempt++) {
                assertThatThrownBy(() -> context.getBean(Accounts.class))
                        .isInstanceOf(BeanCreationException.class)
                        .rootCause().isInstanceOf(FencingConfigurationException.class)
                        .hasMessageContaining("created after startup")
                        .hasMessageContaining("#acountId");
            }
        }
    }

    @Test
    void aCorrectLazyBeanIsCreatedProxiedAndFenced() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
                CorrectConfig.class)) {
            Accounts accounts = context.getBean(Accounts.class);
            assertThat(AopUtils.isAopProxy(accounts)).isTrue();
            FencingContext.run(new FencingToken("accounts:1", 1, "a"), () -> accounts.deposit(1, 10));
        }
    }
}
