package dev.fencing.boot.autoconfigure.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * An application that excludes Boot's {@code TaskSchedulingAutoConfiguration} gets no {@code taskScheduler} bean from
 * Boot, and its {@code @Scheduled} jobs run on the scheduler Spring makes itself. With the starter it failed to start
 * ("No qualifying bean of type 'ThreadPoolTaskSchedulerBuilder'"): the starter's {@code taskScheduler} asked for the
 * builder the excluded configuration defines. The starter now backs off with Boot's.
 */
@Timeout(60)
class ExcludedTaskSchedulingTest {

    static final List<String> RUNS = new CopyOnWriteArrayList<>();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    static class JobsApplication {
        @Scheduled(fixedDelay = 50)
        void job() {
            RUNS.add(Thread.currentThread().getName());
        }
    }

    private ConfigurableApplicationContext start(String exclude) {
        RUNS.clear();
        return new SpringApplicationBuilder(JobsApplication.class).web(WebApplicationType.NONE)
                .properties("spring.main.banner-mode=off", "spring.flyway.enabled=false",
                        "spring.autoconfigure.exclude=org.springframework.boot.r2dbc.autoconfigure"
                                + ".R2dbcAutoConfiguration" + exclude,
                        "fencing.store.type=in-memory")
                .run();
    }

    @Test
    void excludingBootsTaskSchedulingStartsWithoutATaskSchedulerBeanAsBootDoes() throws Exception {
        try (ConfigurableApplicationContext context =
                start(",org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration")) {
            assertThat(context.containsBean("taskScheduler")).isFalse();
            while (RUNS.isEmpty()) {
                Thread.sleep(10);
            }
        }
    }

    @Test
    void notExcludedTheStartersSchedulerIsBootsTaskScheduler() {
        try (ConfigurableApplicationContext context = start("")) {
            assertThat(context.getBean("taskScheduler").getClass().getSimpleName())
                    .isEqualTo("TriggerLeftScopesTaskScheduler");
        }
    }
}
