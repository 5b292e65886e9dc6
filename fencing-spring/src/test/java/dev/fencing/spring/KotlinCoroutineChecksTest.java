package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import kotlin.coroutines.Continuation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;
import org.springframework.mock.web.MockServletContext;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.support.AnnotationConfigWebApplicationContext;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;
import reactor.core.publisher.Hooks;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The two Kotlin coroutine checks come with {@code @EnableFencing} itself, without Spring Boot: a {@code @Scheduled}
 * suspend function fails startup unless the environment allows it, and Spring MVC suspend handlers fail startup while
 * Reactor's automatic context propagation is off. (Kotlin signatures are written as kotlinc emits them: a
 * {@link Continuation} last.)
 */
@Timeout(60)
class KotlinCoroutineChecksTest {

    static class Jobs {
        /** {@code @Scheduled(fixedDelay = 1000) suspend fun sweep()}. */
        @Scheduled(fixedDelay = 1000)
        public Object sweep(Continuation<? super kotlin.Unit> completion) {
            return kotlin.Unit.INSTANCE;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableFencing(allowInMemoryStore = true)
    static class JobsApp {
        @Bean
        Jobs jobs() {
            return new Jobs();
        }
    }

    @RestController
    static class Accounts {
        /** {@code suspend fun deposit(@PathVariable id: Long): String}. */
        @GetMapping("/accounts/{id}/deposit")
        public Object deposit(@PathVariable long id, Continuation<? super String> completion) {
            return "ok";
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableWebMvc
    @EnableFencing(allowInMemoryStore = true)
    static class WebApp {
        @Bean
        Accounts accounts() {
            return new Accounts();
        }
    }

    private final boolean propagatingBefore = Hooks.isAutomaticContextPropagationEnabled();

    @AfterEach
    void restorePropagation() {
        if (propagatingBefore) {
            Hooks.enableAutomaticContextPropagation();
        } else {
            Hooks.disableAutomaticContextPropagation();
        }
    }

    @Test
    void aScheduledSuspendFunctionFailsStartupWithEnableFencingAlone() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(JobsApp.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("KotlinCoroutineChecksTest.Jobs.sweep")
                .hasMessageContaining("fencing.kotlin.allow-scheduled-suspend-functions=true");
    }

    @Test
    void theEnvironmentsPropertyAllowsIt() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
            context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("test",
                    Map.of("fencing.kotlin.allow-scheduled-suspend-functions", "true")));
            context.register(JobsApp.class);
            context.refresh();
            assertThat(context.getBean(Jobs.class)).isNotNull();
        }
    }

    @Test
    void anMvcSuspendHandlerFailsStartupWhilePropagationIsOff() {
        Hooks.disableAutomaticContextPropagation();
        assertThatThrownBy(() -> webContext().close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Accounts#deposit(long, Continuation)")
                .hasMessageContaining("Hooks.enableAutomaticContextPropagation()");
    }

    @Test
    void anMvcSuspendHandlerStartsWithPropagationOn() {
        Hooks.enableAutomaticContextPropagation();
        try (AnnotationConfigWebApplicationContext context = webContext()) {
            assertThat(context.getBean(Accounts.class)).isNotNull();
        }
    }

    private static AnnotationConfigWebApplicationContext webContext() {
        AnnotationConfigWebApplicationContext context = new AnnotationConfigWebApplicationContext();
        context.setServletContext(new MockServletContext());
        context.register(WebApp.class);
        context.refresh();
        return context;
    }
}
