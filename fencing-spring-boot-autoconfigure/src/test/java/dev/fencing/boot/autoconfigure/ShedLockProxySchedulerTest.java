package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.shedlock.EnableSchedulerLockFencing;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * ShedLock's {@code PROXY_SCHEDULER} mode proxies the {@code TaskScheduler} bean: the starter's must be proxyable as
 * Boot's is, on platform and virtual threads.
 */
@Timeout(60)
class ShedLockProxySchedulerTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, FencingAutoConfiguration.class,
                    FencingTaskExecutionAutoConfiguration.class, FencingTaskSchedulingAutoConfiguration.class,
                    TaskExecutionAutoConfiguration.class, TaskSchedulingAutoConfiguration.class))
            .withUserConfiguration(SchedulerLocked.class)
            .withPropertyValues("fencing.store.type=in-memory");

    /** Counts the locks ShedLock takes. */
    static class CountingLockProvider implements LockProvider {
        static final List<String> locked = new CopyOnWriteArrayList<>();

        @Override
        public Optional<SimpleLock> lock(LockConfiguration configuration) {
            locked.add(configuration.getName());
            return Optional.of(() -> { });
        }
    }

    /** A cron and a fixed-delay job under ShedLock. */
    public static class Jobs {
        final CountDownLatch cron = new CountDownLatch(2);
        final CountDownLatch delay = new CountDownLatch(2);

        @Scheduled(cron = "* * * * * *")
        @SchedulerLock(name = "cron-job")
        public void cron() {
            cron.countDown();
        }

        @Scheduled(fixedDelay = 100)
        @SchedulerLock(name = "delay-job")
        public void delay() {
            delay.countDown();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    @EnableSchedulerLock(interceptMode = EnableSchedulerLock.InterceptMode.PROXY_SCHEDULER,
            defaultLockAtMostFor = "PT10S")
    @EnableSchedulerLockFencing
    static class SchedulerLocked {
        @Bean
        CountingLockProvider lockProvider() {
            return new CountingLockProvider();
        }

        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }

        @Bean
        Jobs jobs() {
            return new Jobs();
        }
    }

    private void lockedRuns(String... properties) {
        CountingLockProvider.locked.clear();
        runner.withPropertyValues(properties).run(context -> {
            assertThat(context).hasNotFailed();
            Jobs jobs = context.getBean(Jobs.class);
            assertThat(jobs.cron.await(20, TimeUnit.SECONDS)).isTrue();
            assertThat(jobs.delay.await(20, TimeUnit.SECONDS)).isTrue();
            assertThat(CountingLockProvider.locked).contains("cron-job", "delay-job");
        });
    }

    @Test
    void proxySchedulerModeOnPlatformThreads() {
        lockedRuns();
    }

    @Test
    void proxySchedulerModeOnVirtualThreads() {
        lockedRuns("spring.threads.virtual.enabled=true");
    }

    @Test
    void proxySchedulerModeWithBootsOwnScheduler() {
        lockedRuns("fencing.enabled=false");
    }
}
