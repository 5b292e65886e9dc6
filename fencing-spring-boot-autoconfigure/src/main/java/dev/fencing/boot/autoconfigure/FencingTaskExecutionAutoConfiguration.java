package dev.fencing.boot.autoconfigure;

import dev.fencing.context.FencingThreadLocalAccessor;
import io.micrometer.context.ContextSnapshotFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.task.TaskDecorator;
import org.springframework.core.task.support.ContextPropagatingTaskDecorator;

/**
 * Carries the bound fencing tokens to Boot's task executor threads ({@code @Async}, {@code applicationTaskExecutor}),
 * with no code: a {@link ContextPropagatingTaskDecorator} bean, which Boot applies to the executors it builds when it
 * is the application's only {@link TaskDecorator}. It propagates every context registered with Micrometer's
 * context-propagation, the tokens among them ({@link FencingThreadLocalAccessor}).
 *
 * <p>An application that declares a {@code TaskDecorator} of its own keeps it: this backs off, and the application
 * carries the tokens itself (for example by delegating to a {@code ContextPropagatingTaskDecorator}).
 */
@AutoConfiguration(beforeName = {
        "org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration",
        "org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration"})
@ConditionalOnClass({FencingThreadLocalAccessor.class, ContextSnapshotFactory.class, ContextPropagatingTaskDecorator.class})
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
public class FencingTaskExecutionAutoConfiguration {

    /** Boot's executors take the single {@code TaskDecorator} bean: this one, unless the application has its own. */
    @Bean
    @ConditionalOnMissingBean(TaskDecorator.class)
    ContextPropagatingTaskDecorator fencingContextPropagatingTaskDecorator() {
        return new ContextPropagatingTaskDecorator();
    }
}
