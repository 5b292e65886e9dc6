package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import kotlin.coroutines.Continuation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Hooks;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A servlet application with Kotlin suspend handler methods fails startup while Reactor's automatic context
 * propagation is off (a coroutine resumed on another request's thread would be checked with that request's token),
 * and starts once it is on; an application without suspend handlers starts either way.
 */
@Timeout(60)
class SuspendingHandlersCheckTest {

    @RestController
    static class Accounts {
        /** The JVM signature kotlinc gives {@code suspend fun deposit(@PathVariable id: Long): String}. */
        @GetMapping("/accounts/{id}/deposit")
        public Object deposit(@PathVariable long id, Continuation<? super String> completion) {
            return "ok";
        }

        @GetMapping("/accounts/{id}")
        public String show(@PathVariable long id) {
            return "ok";
        }
    }

    @RestController
    static class Blocking {
        @GetMapping("/blocking")
        public String get() {
            return "ok";
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class SuspendingApp {
        @Bean
        Accounts accounts() {
            return new Accounts();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class BlockingApp {
        @Bean
        Blocking blocking() {
            return new Blocking();
        }
    }

    private final WebApplicationContextRunner web = new WebApplicationContextRunner()
            .withConfiguration(FencingAutoConfigurationTest.FENCING)
            .withConfiguration(AutoConfigurations.of(WebMvcAutoConfiguration.class))
            .withPropertyValues("fencing.store.type=in-memory");

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
    void suspendHandlersWithoutContextPropagationFailStartupNamingThemAndTheFix() {
        Hooks.disableAutomaticContextPropagation();
        web.withUserConfiguration(SuspendingApp.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("Accounts#deposit(long, Continuation)")
                    .hasMessageNotContaining("Accounts#show")
                    .hasMessageContaining("Dispatchers.Unconfined")
                    .hasMessageContaining("Hooks.enableAutomaticContextPropagation()")
                    .hasMessageContaining("spring.reactor.context-propagation=auto");
        });
    }

    @Test
    void suspendHandlersStartWithContextPropagationOn() {
        Hooks.enableAutomaticContextPropagation();
        web.withUserConfiguration(SuspendingApp.class).run(context -> assertThat(context).hasNotFailed()
                .hasBean("dev.fencing.internalSuspendingHandlersCheck"));
    }

    @Test
    void anApplicationWithoutSuspendHandlersStartsEitherWay() {
        Hooks.disableAutomaticContextPropagation();
        web.withUserConfiguration(BlockingApp.class).run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void fencingDisabledChecksNothing() {
        Hooks.disableAutomaticContextPropagation();
        web.withUserConfiguration(SuspendingApp.class).withPropertyValues("fencing.enabled=false")
                .run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean("dev.fencing.internalSuspendingHandlersCheck"));
    }
}
