package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Boot's {@code ThreadPoolTaskScheduler} decorates each run of a cron ({@code Trigger}) task when it schedules it, and
 * it schedules the next run at the end of the current one, on the same thread, inside the current run's decorated
 * scope. So what a run left bound (a {@code FencingContext.bind} never closed) was captured for the next run, which
 * bound it exactly, captured it again for the one after, and so on: every later run of the job wrote under the leaked
 * token, although the decorator closed and reported the leak each time. (A trial: the second and third runs of a
 * {@code @Scheduled(cron = ..)} job were accepted with the token the first run leaked.)
 */
@Timeout(60)
class ScheduledTriggerLeftScopesTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                    FencingTaskExecutionAutoConfiguration.class, FencingTaskSchedulingAutoConfiguration.class,
                    TaskExecutionAutoConfiguration.class, TaskSchedulingAutoConfiguration.class))
            .withUserConfiguration(SchedulingConfig.class)
            .withBean(SimpleMeterRegistry.class)
            .withPropertyValues("fencing.store.type=in-memory", "spring.task.scheduling.pool.size=1");

    public static class Ledger {
        @Fenced(resource = "ledger")
        public void post() {
        }
    }

    /** Its first run binds a token and never closes the scope; the later runs write with no token of their own. */
    public static class CronJob {
        final Ledger ledger;
        final List<String> outcomes = new CopyOnWriteArrayList<>();
        final CountDownLatch runs = new CountDownLatch(3);

        CronJob(Ledger ledger) {
            this.ledger = ledger;
        }

        @Scheduled(cron = "* * * * * *")
        public void run() {
            if (runs.getCount() == 0) {
                return;
            }
            if (outcomes.isEmpty()) {
                FencingContext.bind(new FencingToken("ledger", 9, "first-run"));
                outcomes.add("leaked");
            } else {
                try {
                    ledger.post();
                    outcomes.add("written under " + FencingContext.current("ledger"));
                } catch (MissingTokenException e) {
                    outcomes.add("missing");
                }
            }
            runs.countDown();
        }

        public List<String> outcomes() {
            return outcomes;
        }

        public boolean awaitRuns() throws InterruptedException {
            return runs.await(30, TimeUnit.SECONDS);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class SchedulingConfig {
        @Bean
        Ledger ledger() {
            return new Ledger();
        }

        @Bean
        CronJob cronJob(Ledger ledger) {
            return new CronJob(ledger);
        }
    }

    @AfterEach
    void nothingLeftOnTheTestThread() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void whatACronRunLeftBoundIsNotCarriedIntoItsNextRuns() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean("taskScheduler", TaskScheduler.class))
                    .isInstanceOf(ThreadPoolTaskScheduler.class);
            assertThat(context).hasBean("applicationTaskExecutor");
            CronJob job = context.getBean(CronJob.class);
            assertThat(job.awaitRuns()).isTrue();
            assertThat(job.outcomes()).containsExactly("leaked", "missing", "missing");
            assertThat(context.getBean(MeterRegistry.class).get("fencing.scopes.left").tag("carrier", "executor")
                    .counter().count()).isEqualTo(1);
        });
    }
}
