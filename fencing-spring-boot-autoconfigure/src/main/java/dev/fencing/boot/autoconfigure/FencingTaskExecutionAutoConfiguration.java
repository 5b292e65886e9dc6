package dev.fencing.boot.autoconfigure;

import dev.fencing.context.FencingThreadLocalAccessor;
import dev.fencing.metrics.FencingMetrics;
import io.micrometer.context.ContextSnapshotFactory;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.task.TaskDecorator;
import org.springframework.core.task.support.ContextPropagatingTaskDecorator;

/**
 * Carries the bound fencing tokens to Boot's task executor threads ({@code @Async}, {@code applicationTaskExecutor}),
 * with no code: a {@link ContextPropagatingTaskDecorator} bean, which Boot applies to the executors it builds,
 * composed with the application's own {@link TaskDecorator} beans when it has some. It propagates every context
 * registered with Micrometer's context-propagation, the tokens among them ({@link FencingThreadLocalAccessor}), and
 * reports what a task left bound on the pool thread ({@code fencing.scopes.left}, {@code carrier=executor}).
 *
 * <p>It backs off only for a {@code ContextPropagatingTaskDecorator} of the application, which carries the tokens
 * already. (It used to back off for any decorator, and an application that added one for its logging context had
 * every {@code @Async} fenced call refused as missing its token.)
 */
@AutoConfiguration(beforeName = {
        "org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration",
        "org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration"})
@ConditionalOnClass({FencingThreadLocalAccessor.class, ContextSnapshotFactory.class,
        ContextPropagatingTaskDecorator.class})
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
public class FencingTaskExecutionAutoConfiguration {

    /** Boot's executors compose every {@code TaskDecorator} bean: this one with the application's. */
    @Bean
    @ConditionalOnMissingBean(ContextPropagatingTaskDecorator.class)
    ContextPropagatingTaskDecorator fencingContextPropagatingTaskDecorator(ObjectProvider<MeterRegistry> registry) {
        // also reports what a task left bound on the pool thread (fencing.scopes.left, carrier=executor)
        return new LeftScopesTaskDecorator(new FencingMetrics(registry.getIfUnique()));
    }
}
