package dev.fencing.web.internal;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.reactive.InMemoryReactiveFenceStore;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.web.MockServletContext;
import org.springframework.web.context.support.AnnotationConfigWebApplicationContext;
import org.springframework.web.reactive.config.EnableWebFlux;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * fencing-web's startup check under {@code @EnableFencing} without Spring Boot: the failure says how to register the
 * interceptor or the filter by hand, and a context that serves no web requests is left alone.
 */
@Timeout(60)
class UnadmittedHeaderCheckTest {

    public static class Ledger {
        @Fenced(resource = "ledger")
        public void append() {
        }
    }

    @Configuration
    @EnableFencing(proxyTargetClass = true)
    static class NoWeb {
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
    @EnableWebMvc
    static class Mvc extends NoWeb {
    }

    @Configuration
    @EnableWebFlux
    @EnableFencing(proxyTargetClass = true)
    static class WebFlux {
        @Bean
        InMemoryReactiveFenceStore reactiveFenceStore() {
            return new InMemoryReactiveFenceStore();
        }
    }

    @Test
    void aContextThatServesNoWebRequestsStarts() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(NoWeb.class)) {
            assertThat(context.getBean(Ledger.class)).isNotNull();
        }
    }

    @Test
    void springMvcWithoutTheInterceptorFailsSayingHowToRegisterIt() {
        AnnotationConfigWebApplicationContext context = new AnnotationConfigWebApplicationContext();
        context.setServletContext(new MockServletContext());
        context.register(Mvc.class);
        try {
            assertThatThrownBy(context::refresh).isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("'requestMappingHandlerMapping'")
                    .hasMessageContaining("registry.addInterceptor(new UnadmittedTokenInterceptor(")
                    .hasMessageContaining("MappedInterceptor")
                    .hasMessageNotContaining("DelegatingWebMvcConfiguration");
        } finally {
            context.close();
        }
    }

    @Test
    void webFluxWithoutTheFilterFailsSayingHowToDeclareIt() {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.register(WebFlux.class);
        try {
            assertThatThrownBy(context::refresh).isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("no FencingTokenWebFilter bean")
                    .hasMessageContaining("new FencingTokenWebFilter(exchange -> false)");
        } finally {
            context.close();
        }
    }
}
