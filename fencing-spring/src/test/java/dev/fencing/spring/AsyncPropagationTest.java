package dev.fencing.spring;

import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.support.ContextPropagatingTaskDecorator;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code @Async} work reaching a fenced repository carries the caller's token, with one line of configuration. */
class AsyncPropagationTest {

    static class AsyncBookkeeper {
        private final Fixtures.Ledger ledger;

        AsyncBookkeeper(Fixtures.Ledger ledger) {
            this.ledger = ledger;
        }

        @Async
        public CompletableFuture<String> appendLater(String entry) {
            ledger.append(entry);
            return CompletableFuture.completedFuture(Thread.currentThread().getName());
        }
    }

    @Configuration
    @EnableAsync
    @EnableFencing
    static class Base {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        Fixtures.Ledger ledger() {
            return new Fixtures.Ledger();
        }

        @Bean
        AsyncBookkeeper bookkeeper(Fixtures.Ledger ledger) {
            return new AsyncBookkeeper(ledger);
        }
    }

    @Configuration
    static class Propagating extends Base {
        @Bean
        ThreadPoolTaskExecutor taskExecutor() {
            ThreadPoolTaskExecutor executor = new ThreadPoolTaskExecutor();
            executor.setCorePoolSize(1);
            executor.setThreadNamePrefix("async-");
            executor.setTaskDecorator(new ContextPropagatingTaskDecorator()); // the one line
            return executor;
        }
    }

    @Configuration
    static class NotPropagating extends Base {
        @Bean
        ThreadPoolTaskExecutor taskExecutor() {
            ThreadPoolTaskExecutor executor = new ThreadPoolTaskExecutor();
            executor.setCorePoolSize(1);
            executor.setThreadNamePrefix("async-");
            return executor;
        }
    }

    private AnnotationConfigApplicationContext context;

    @AfterEach
    void close() {
        context.close();
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void asyncMethodSeesTheCallersTokenAndThePoolThreadKeepsNothing() throws Exception {
        context = new AnnotationConfigApplicationContext(Propagating.class);
        AsyncBookkeeper bookkeeper = context.getBean(AsyncBookkeeper.class);
        Fixtures.Ledger ledger =
                (Fixtures.Ledger) AopProxyUtils.getSingletonTarget(context.getBean(Fixtures.Ledger.class));
        FencingToken token = new FencingToken("ledger", 5, "caller");

        String thread;
        try (var ignored = FencingContext.bind(token)) {
            thread = bookkeeper.appendLater("async entry").get(10, TimeUnit.SECONDS);
        }
        assertThat(thread).startsWith("async-");
        assertThat(ledger.entries).containsExactly("async entry");
        assertThat(ledger.seen).containsExactly(token);

        // the same pool thread, reused by a call made without a token: it is refused, not served the stale token
        assertThatThrownBy(() -> bookkeeper.appendLater("no token").get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(MissingTokenException.class);
        assertThat(ledger.entries).containsExactly("async entry");
    }

    @Test
    void withoutPropagationTheAsyncWriteIsRefusedAsMissingAndCounted() {
        context = new AnnotationConfigApplicationContext(NotPropagating.class);
        AsyncBookkeeper bookkeeper = context.getBean(AsyncBookkeeper.class);
        try (var ignored = FencingContext.bind(new FencingToken("ledger", 5, "caller"))) {
            assertThatThrownBy(() -> bookkeeper.appendLater("lost token").get(10, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(MissingTokenException.class);
        }
        assertThat(context.getBean(MeterRegistry.class).get("fencing.checks").tag("resource", "ledger")
                .tag("outcome", "missing").counter().count()).isEqualTo(1);
    }
}
