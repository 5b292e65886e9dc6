package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.ClassUtils;

import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Users of Spring proxies need no AspectJ: this module's test classpath has none (its pom has no AspectJ dependency,
 * and no Spring module brings one), yet {@code @EnableFencing} in PROXY mode starts and fences; ASPECTJ mode fails
 * at startup naming the module to add.
 */
class NoAspectJTest {

    @Test
    void theClasspathHasNoAspectJ() {
        ClassLoader loader = NoAspectJTest.class.getClassLoader();
        assertThat(ClassUtils.isPresent("org.aspectj.lang.ProceedingJoinPoint", loader)).isFalse();
        assertThat(ClassUtils.isPresent("org.aspectj.weaver.tools.PointcutParser", loader)).isFalse();
        assertThat(ClassUtils.isPresent("dev.fencing.aspectj.FencingAspect", loader)).isFalse();
        assertThat(loader.getResource("org/aspectj")).isNull();
        assertThat(loader.getResource("META-INF/aop.xml")).isNull();
    }

    @Test
    void aProxyContextFencesWithoutAspectJ() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(ProxyConfig.class)) {
            Ledger ledger = context.getBean(Ledger.class);
            assertThat(AopUtils.isAopProxy(ledger)).isTrue();
            FencingContext.run(new FencingToken("ledger:7", 2, "h"), () -> ledger.post(7));
            assertThatThrownBy(() -> FencingContext.run(new FencingToken("ledger:7", 1, "h"), () -> ledger.post(7)))
                    .isInstanceOf(RuntimeException.class);
            assertThat(ledger.posted()).isEqualTo(1);
        }
    }

    @Test
    void aspectjModeWithoutFencingAspectNamesTheModule() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(AspectJConfig.class).close())
                .hasRootCauseInstanceOf(FencingConfigurationException.class)
                .rootCause().hasMessageContaining("dev.fencing:fencing-aspect")
                .hasMessageContaining("mode = AdviceMode.ASPECTJ");
    }

    static class Ledger {
        private final AtomicInteger posted = new AtomicInteger();

        public int posted() {
            return posted.get();
        }

        @Fenced(resource = "ledger", key = "#entryId")
        public void post(long entryId) {
            posted.incrementAndGet();
        }
    }

    @Configuration
    @EnableFencing
    static class ProxyConfig {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        Ledger ledger() {
            return new Ledger();
        }
    }

    @Configuration
    @EnableFencing(mode = AdviceMode.ASPECTJ)
    static class AspectJConfig {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }
    }
}
