package dev.fencing.boot.autoconfigure;

import dev.fencing.metrics.FencingMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.ScheduledExecutorService;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionEvaluationReport;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnThreading;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.task.SimpleAsyncTaskSchedulerBuilder;
import org.springframework.boot.task.ThreadPoolTaskSchedulerBuilder;
import org.springframework.boot.thread.Threading;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.task.support.ContextPropagatingTaskDecorator;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.config.TaskManagementConfigUtils;
import org.springframework.scheduling.concurrent.SimpleAsyncTaskScheduler;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Boot's {@code taskScheduler}, from Boot's builder and under Boot's own conditions (so Boot's backs off and nothing
 * else changes), with what a scheduled run leaves bound (a {@code FencingContext.bind} never closed) kept from the
 * later runs:
 * <ul>
 *   <li>on platform threads, a {@link ThreadPoolTaskScheduler} that closes what a cron ({@code Trigger}) run left
 *   before Spring schedules its next run, which captured it and so carried it into every later run (see
 *   {@link TriggerLeftScopesTaskScheduler});</li>
 *   <li>on virtual threads ({@code spring.threads.virtual.enabled=true}), a {@link SimpleAsyncTaskScheduler} that
 *   applies the task decorators (the starter's {@link ContextPropagatingTaskDecorator} among them) to fixed-delay
 *   tasks too, which Spring's runs on one scheduler thread without them, so a binding one run left stayed there for
 *   the next runs (see {@link DecoratedFixedDelayTaskScheduler}).</li>
 * </ul>
 * After Boot's task execution configuration, whose {@code applicationTaskExecutor} would back off for a scheduler
 * defined before it (it is an {@code Executor}), and before Boot's task scheduling configuration. An application's own
 * {@code TaskScheduler} or {@code ScheduledExecutorService} bean makes it back off, and so does excluding Boot's task
 * scheduling configuration (which defines the builders): Boot then defines no {@code taskScheduler} either.
 */
@AutoConfiguration(afterName = "org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration",
        beforeName = FencingTaskSchedulingAutoConfiguration.BOOT_TASK_SCHEDULING)
@ConditionalOnClass({ContextPropagatingTaskDecorator.class, SimpleAsyncTaskSchedulerBuilder.class})
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
@ConditionalOnBean(name = TaskManagementConfigUtils.SCHEDULED_ANNOTATION_PROCESSOR_BEAN_NAME)
@ConditionalOnMissingBean({TaskScheduler.class, ScheduledExecutorService.class})
@Conditional(FencingTaskSchedulingAutoConfiguration.BootTaskSchedulingNotExcluded.class)
public class FencingTaskSchedulingAutoConfiguration {

    static final String BOOT_TASK_SCHEDULING =
            "org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration";

    /** Boot's platform-thread {@code taskScheduler}, built by Boot's builder, closing what a trigger run left. */
    @Bean(name = "taskScheduler")
    @ConditionalOnThreading(Threading.PLATFORM)
    ThreadPoolTaskScheduler taskScheduler(ThreadPoolTaskSchedulerBuilder builder,
            ObjectProvider<MeterRegistry> registry) {
        return builder.configure(new TriggerLeftScopesTaskScheduler(new FencingMetrics(registry.getIfUnique())));
    }

    /** Boot's virtual-thread {@code taskScheduler}, built by Boot's builder, decorating fixed-delay tasks too. */
    @Bean(name = "taskScheduler")
    @ConditionalOnThreading(Threading.VIRTUAL)
    SimpleAsyncTaskScheduler taskSchedulerVirtualThreads(SimpleAsyncTaskSchedulerBuilder builder) {
        return builder.configure(new DecoratedFixedDelayTaskScheduler());
    }

    /**
     * Matches unless Boot's {@code TaskSchedulingAutoConfiguration} is excluded ({@code spring.autoconfigure.exclude},
     * {@code exclude} of {@code @SpringBootApplication} or {@code @EnableAutoConfiguration}): Boot then defines no
     * {@code taskScheduler} and no builder for one, and Spring runs the jobs on a scheduler of its own.
     */
    static final class BootTaskSchedulingNotExcluded extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            if (context.getBeanFactory() != null && ConditionEvaluationReport.get(context.getBeanFactory())
                    .getExclusions().contains(BOOT_TASK_SCHEDULING)) {
                return ConditionOutcome.noMatch(BOOT_TASK_SCHEDULING + " is excluded");
            }
            return ConditionOutcome.match(BOOT_TASK_SCHEDULING + " is not excluded");
        }
    }
}
