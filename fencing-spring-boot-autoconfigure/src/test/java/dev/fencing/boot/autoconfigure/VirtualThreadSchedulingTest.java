package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
import org.junit.jupiter.api.BeforeEach;
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
import org.springframework.scheduling.concurrent.SimpleAsyncTaskScheduler;

/**
 * With {@code spring.threads.virtual.enabled=true} Boot schedules on a {@code SimpleAsyncTaskScheduler}, which runs a
 * fixed-delay task on its own scheduler thread, one platform thread shared by every fixed-delay job, outside the task
 * decorators it applies to the other tasks. A binding one run left open there stayed for the next runs, of that job
 * and of every other fixed-delay job: they wrote under its token, unreported. (A trial: the second and third runs of a
 * {@code @Scheduled(fixedDelay)} job were accepted with the token the first run leaked.)
 */
@Timeout(60)
class VirtualThreadSchedulingTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                    FencingTaskExecutionAutoConfiguration.class, FencingTaskSchedulingAutoConfiguration.class,
                    TaskExecutionAutoConfiguration.class, TaskSchedulingAutoConfiguration.class))
            .withUserConfiguration(SchedulingConfig.class)
            .withBean(SimpleMeterRegistry.class)
            .withPropertyValues("fencing.store.type=in-memory", "spring.threads.virtual.enabled=true",
                    "spring.task.scheduling.thread-name-prefix=vt-scheduling-");

    public static class Ledger {
        @Fenced(resource = "ledger")
        public void post() {
        }
    }

    /** Its first run binds a token and never closes the scope; the later runs write with no token of their own. */
    public static class LeakingJob {
        final Ledger ledger;
        final List<String> outcomes = new CopyOnWriteArrayList<>();
        final CountDownLatch runs = new CountDownLatch(3);

        LeakingJob(Ledger ledger) {
            this.ledger = ledger;
        }

        @Scheduled(fixedDelay = 20)
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
        LeakingJob leakingJob(Ledger ledger) {
            return new LeakingJob(ledger);
        }
    }

    @BeforeEach
    void virtualThreads() {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need Java 21");
    }

    @AfterEach
    void nothingLeftOnTheTestThread() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void whatAFixedDelayRunLeftBoundIsClosedAndReportedSoTheNextRunWritesWithoutIt() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean("taskScheduler", TaskScheduler.class))
                    .isInstanceOf(SimpleAsyncTaskScheduler.class);
            // Boot's executor for @Async is still there (a scheduler defined before it made it back off)
            assertThat(context).hasBean("applicationTaskExecutor");
            assertThat(context.getBean("applicationTaskExecutor")).isNotSameAs(context.getBean("taskScheduler"));
            LeakingJob job = context.getBean(LeakingJob.class);
            assertThat(job.awaitRuns()).isTrue();
            assertThat(job.outcomes()).containsExactly("leaked", "missing", "missing");
            assertThat(context.getBean(MeterRegistry.class).get("fencing.scopes.left").tag("carrier", "executor")
                    .counter().count()).isEqualTo(1);
        });
    }
}
