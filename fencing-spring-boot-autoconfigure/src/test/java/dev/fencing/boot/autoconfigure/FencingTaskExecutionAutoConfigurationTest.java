package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.token.FencingToken;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.TaskDecorator;
import org.springframework.core.task.support.ContextPropagatingTaskDecorator;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;

/** {@code @Async} work carries the caller's tokens through Boot's task executor, with no code. */
class FencingTaskExecutionAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                    FencingTaskExecutionAutoConfiguration.class, TaskExecutionAutoConfiguration.class))
            .withUserConfiguration(AsyncConfig.class)
            .withPropertyValues("fencing.store.type=in-memory", "spring.task.execution.pool.core-size=1",
                    "spring.task.execution.thread-name-prefix=boot-async-");

    public static class Ledger {
        final List<FencingToken> seen = new CopyOnWriteArrayList<>();

        @Fenced(resource = "ledger")
        public void post() {
            seen.add(FencingContext.current("ledger"));
        }

        public List<FencingToken> seen() {
            return seen;
        }
    }

    public static class Bookkeeper {
        private final Ledger ledger;

        Bookkeeper(Ledger ledger) {
            this.ledger = ledger;
        }

        /** Binds a token on the pool thread and never closes its scope. */
        @Async
        public CompletableFuture<String> leak() {
            FencingContext.bind(new FencingToken("ledger", 9, "leaker"));
            return CompletableFuture.completedFuture(Thread.currentThread().getName());
        }

        @Async
        public CompletableFuture<String> postLater() {
            ledger.post();
            return CompletableFuture.completedFuture(Thread.currentThread().getName());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAsync
    static class AsyncConfig {
        @Bean
        Ledger ledger() {
            return new Ledger();
        }

        @Bean
        Bookkeeper bookkeeper(Ledger ledger) {
            return new Bookkeeper(ledger);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UserDecorator {
        final List<String> decorated = new CopyOnWriteArrayList<>();

        @Bean
        TaskDecorator userTaskDecorator() {
            return runnable -> {
                decorated.add("task");
                return runnable;
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UserPropagatingDecorator {
        @Bean
        ContextPropagatingTaskDecorator userPropagatingDecorator() {
            return new ContextPropagatingTaskDecorator();
        }
    }

    @AfterEach
    void nothingLeftOnTheTestThread() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void asyncMethodSeesTheCallersTokenThroughBootsExecutorAndThePoolThreadKeepsNothing() {
        runner.run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(TaskDecorator.class)
                    .getBean(TaskDecorator.class).isInstanceOf(ContextPropagatingTaskDecorator.class);
            assertThat(context.getBean("applicationTaskExecutor")).isInstanceOf(ThreadPoolTaskExecutor.class);
            Bookkeeper bookkeeper = context.getBean(Bookkeeper.class);
            Ledger ledger = context.getBean(Ledger.class);
            FencingToken token = new FencingToken("ledger", 7, "caller");

            String thread;
            try (var ignored = FencingContext.bind(token)) {
                thread = bookkeeper.postLater().get(10, TimeUnit.SECONDS);
            }
            assertThat(thread).startsWith("boot-async-");
            assertThat(ledger.seen()).containsExactly(token);

            // the same pool thread, called without a token: refused, not served the previous caller's token
            assertThatThrownBy(() -> bookkeeper.postLater().get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(MissingTokenException.class);
            assertThat(ledger.seen()).containsExactly(token);
        });
    }

    /**
     * What an @Async method leaves bound on the pool thread is reported when it ends (counted with the application's
     * registry, logged at ERROR), and the pool thread's next task runs without it.
     */
    @Test
    void whatAnAsyncMethodLeftBoundIsCountedAndTheNextTaskRunsWithoutIt() {
        runner.withBean(io.micrometer.core.instrument.simple.SimpleMeterRegistry.class).run(context -> {
            assertThat(context).hasNotFailed();
            Bookkeeper bookkeeper = context.getBean(Bookkeeper.class);
            String leakThread = bookkeeper.leak().get(10, TimeUnit.SECONDS);
            assertThatThrownBy(() -> bookkeeper.postLater().get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(MissingTokenException.class);
            assertThat(leakThread).startsWith("boot-async-");
            assertThat(context.getBean(io.micrometer.core.instrument.MeterRegistry.class).get("fencing.scopes.left")
                    .tag("carrier", "executor").counter().count()).isEqualTo(1);
        });
    }

    /**
     * Boot composes every TaskDecorator bean: the application's own (for its logging context, say) runs, and the
     * tokens still travel (the starter's decorator used to back off, and every such @Async fenced call was refused
     * as missing its token).
     */
    @Test
    void aTaskDecoratorOfTheApplicationIsComposedWithTheStartersAndTheTokensStillTravel() {
        runner.withUserConfiguration(UserDecorator.class).run(context -> {
            assertThat(context).hasNotFailed().hasBean("userTaskDecorator")
                    .hasSingleBean(ContextPropagatingTaskDecorator.class);
            FencingToken token = new FencingToken("ledger", 7, "caller");
            try (var ignored = FencingContext.bind(token)) {
                context.getBean(Bookkeeper.class).postLater().get(10, TimeUnit.SECONDS);
            }
            assertThat(context.getBean(Ledger.class).seen()).containsExactly(token);
            assertThat(context.getBean(UserDecorator.class).decorated).as("the application's decorator ran too")
                    .isNotEmpty();
        });
    }

    @Test
    void aPropagatingDecoratorOfTheApplicationIsTheOnlyOne() {
        runner.withUserConfiguration(UserPropagatingDecorator.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(TaskDecorator.class);
            assertThat(context.getBean(TaskDecorator.class)).isSameAs(context.getBean("userPropagatingDecorator"));
        });
    }

    @Test
    void fencingEnabledFalseAddsNoDecorator() {
        runner.withPropertyValues("fencing.enabled=false").run(context ->
                assertThat(context).hasNotFailed().doesNotHaveBean(TaskDecorator.class));
    }
}
