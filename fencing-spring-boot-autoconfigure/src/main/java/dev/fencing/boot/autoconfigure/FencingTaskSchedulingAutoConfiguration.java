package dev.fencing.boot.autoconfigure;

import java.util.concurrent.ScheduledExecutorService;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnThreading;
import org.springframework.boot.task.SimpleAsyncTaskSchedulerBuilder;
import org.springframework.boot.thread.Threading;
import org.springframework.context.annotation.Bean;
import org.springframework.core.task.support.ContextPropagatingTaskDecorator;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.concurrent.SimpleAsyncTaskScheduler;

/**
 * On virtual threads ({@code spring.threads.virtual.enabled=true}), Boot's {@code taskScheduler} with the task
 * decorators (the starter's {@link ContextPropagatingTaskDecorator} among them) applied to fixed-delay tasks too:
 * Spring's {@link SimpleAsyncTaskScheduler} runs a {@code @Scheduled(fixedDelay = ..)} task on its own scheduler thread,
 * shared by every fixed-delay task, without them, so a binding one run left open stayed there and the next runs wrote
 * under its token, unreported (see {@link DecoratedFixedDelayTaskScheduler}). Defined under Boot's own conditions and
 * from Boot's builder, so Boot's scheduler backs off and nothing else changes; after Boot's task execution
 * configuration, whose {@code applicationTaskExecutor} would back off for a scheduler defined before it (it is an
 * {@code Executor}), and before Boot's task scheduling configuration. An application's own {@code TaskScheduler} or
 * {@code ScheduledExecutorService} bean makes it back off.
 */
@AutoConfiguration(afterName = "org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration",
        beforeName = "org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration")
@ConditionalOnClass({ContextPropagatingTaskDecorator.class, SimpleAsyncTaskSchedulerBuilder.class})
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
@ConditionalOnThreading(Threading.VIRTUAL)
@ConditionalOnBean(name = "org.springframework.scheduling.config.internalScheduledAnnotationProcessor")
@ConditionalOnMissingBean({TaskScheduler.class, ScheduledExecutorService.class})
public class FencingTaskSchedulingAutoConfiguration {

    /** Boot's virtual-thread {@code taskScheduler}, built by Boot's builder, decorating fixed-delay tasks too. */
    @Bean(name = "taskScheduler")
    SimpleAsyncTaskScheduler taskScheduler(SimpleAsyncTaskSchedulerBuilder builder) {
        return builder.configure(new DecoratedFixedDelayTaskScheduler());
    }
}
