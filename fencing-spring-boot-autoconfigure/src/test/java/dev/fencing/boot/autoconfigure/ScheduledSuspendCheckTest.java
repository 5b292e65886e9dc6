package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import kotlin.coroutines.Continuation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.scheduling.annotation.Scheduled;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A bean with a {@code @Scheduled} Kotlin suspend function fails startup (it resumes wherever it was woken, with no
 * fencing context of its own) unless fencing.kotlin.allow-scheduled-suspend-functions is set; a blocking
 * {@code @Scheduled} method and a suspend function that is not scheduled start.
 */
@Timeout(60)
class ScheduledSuspendCheckTest {

    static class Jobs {
        /** The JVM signature kotlinc gives {@code @Scheduled(fixedDelay = 1000) suspend fun sweep()}. */
        @Scheduled(fixedDelay = 1000)
        public Object sweep(Continuation<? super kotlin.Unit> completion) {
            return kotlin.Unit.INSTANCE;
        }

        @Scheduled(fixedDelay = 1000)
        public void report() {
        }
    }

    static class Plain {
        @Scheduled(fixedDelay = 1000)
        public void report() {
        }

        public Object load(Continuation<? super String> completion) {
            return "not scheduled";
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class JobsApp {
        @Bean
        Jobs jobs() {
            return new Jobs();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class PlainApp {
        @Bean
        Plain plain() {
            return new Plain();
        }
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(FencingAutoConfigurationTest.FENCING)
            .withPropertyValues("fencing.store.type=in-memory");

    @Test
    void aScheduledSuspendFunctionFailsStartupNamingItAndTheWayOut() {
        runner.withUserConfiguration(JobsApp.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("ScheduledSuspendCheckTest.Jobs.sweep")
                    .hasMessageNotContaining("report")
                    .hasMessageContaining("Dispatchers.Unconfined")
                    .hasMessageContaining("withContext(Dispatchers.IO)")
                    .hasMessageContaining("fencing.kotlin.allow-scheduled-suspend-functions=true");
        });
    }

    @Test
    void allowedItStarts() {
        runner.withUserConfiguration(JobsApp.class)
                .withPropertyValues("fencing.kotlin.allow-scheduled-suspend-functions=true")
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void blockingJobsAndUnscheduledSuspendFunctionsStart() {
        runner.withUserConfiguration(PlainApp.class).run(context -> assertThat(context).hasNotFailed()
                .hasBean("dev.fencing.internalScheduledSuspendCheck"));
    }
}
