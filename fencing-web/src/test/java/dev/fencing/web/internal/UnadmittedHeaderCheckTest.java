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
import dev.fencing.web.UnadmittedTokenInterceptor;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.servlet.handler.MappedInterceptor;

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
    @EnableWebMvc
    static class MvcOnSomePaths extends NoWeb implements WebMvcConfigurer {
        @Override
        public void addInterceptors(InterceptorRegistry registry) {
            registry.addInterceptor(new UnadmittedTokenInterceptor("nowhere")).addPathPatterns("/internal/**");
        }
    }

    @Configuration
    @EnableWebMvc
    static class MvcExcludingSomePaths extends NoWeb implements WebMvcConfigurer {
        @Override
        public void addInterceptors(InterceptorRegistry registry) {
            registry.addInterceptor(new UnadmittedTokenInterceptor("nowhere")).excludePathPatterns("/notes/**");
        }
    }

    @Configuration
    @EnableWebMvc
    static class MvcOnEveryPath extends NoWeb implements WebMvcConfigurer {
        @Override
        public void addInterceptors(InterceptorRegistry registry) {
            registry.addInterceptor(new UnadmittedTokenInterceptor("nowhere")).addPathPatterns("/**");
        }
    }

    @RestController
    public static class Notes {
        @PostMapping("/notes")
        public String write() {
            return "ok";
        }
    }

    /** Controllers without {@code @EnableWebMvc}: the DispatcherServlet's default mappings, which are no beans. */
    @Configuration
    static class DefaultMappings extends NoWeb {
        @Bean
        Notes notes() {
            return new Notes();
        }
    }

    @Configuration
    static class DefaultMappingsWithTheInterceptorBean extends DefaultMappings {
        @Bean
        MappedInterceptor unadmitted() {
            return new MappedInterceptor(null, new UnadmittedTokenInterceptor("nowhere"));
        }
    }

    @Configuration
    static class DefaultMappingsWithTheInterceptorOnSomePaths extends DefaultMappings {
        @Bean
        MappedInterceptor unadmitted() {
            return new MappedInterceptor(new String[] {"/internal/**"}, new UnadmittedTokenInterceptor("nowhere"));
        }
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
    void theInterceptorOnSomePathsOnlyFailsNamingThat() {
        for (Class<?> config : new Class<?>[] {MvcOnSomePaths.class, MvcExcludingSomePaths.class}) {
            assertThatThrownBy(() -> startWeb(config).close()).as(config.getSimpleName())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("'requestMappingHandlerMapping'")
                    .hasMessageContaining("UnadmittedTokenInterceptor on some paths only")
                    .hasMessageContaining("no addPathPatterns or excludePathPatterns");
        }
    }

    @Test
    void theInterceptorOnEveryPathStarts() {
        try (AnnotationConfigWebApplicationContext context = startWeb(MvcOnEveryPath.class)) {
            assertThat(context.getBean(Ledger.class)).isNotNull();
        }
    }

    @Test
    void controllersOnTheDefaultMappingsNeedTheInterceptorAsAMappedInterceptorBeanOnEveryPath() {
        for (Class<?> config : new Class<?>[] {DefaultMappings.class,
                DefaultMappingsWithTheInterceptorOnSomePaths.class}) {
            assertThatThrownBy(() -> startWeb(config).close()).as(config.getSimpleName())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("default handler mappings (no @EnableWebMvc)")
                    .hasMessageContaining("Declare a bean new MappedInterceptor(null, new UnadmittedTokenInterceptor(");
        }
        try (AnnotationConfigWebApplicationContext context = startWeb(DefaultMappingsWithTheInterceptorBean.class)) {
            assertThat(context.getBean(Notes.class)).isNotNull();
        }
        // outside a servlet application context the same beans serve no request
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
                DefaultMappings.class)) {
            assertThat(context.getBean(Notes.class)).isNotNull();
        }
    }

    private static AnnotationConfigWebApplicationContext startWeb(Class<?> config) {
        AnnotationConfigWebApplicationContext context = new AnnotationConfigWebApplicationContext();
        context.setServletContext(new MockServletContext());
        context.register(config);
        try {
            context.refresh();
        } catch (RuntimeException e) {
            context.close();
            throw e;
        }
        return context;
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
