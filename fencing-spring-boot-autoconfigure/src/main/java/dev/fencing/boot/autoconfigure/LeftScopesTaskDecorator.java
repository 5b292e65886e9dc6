package dev.fencing.boot.autoconfigure;

import dev.fencing.guard.LeftScopes;
import dev.fencing.metrics.FencingMetrics;
import org.springframework.core.task.support.ContextPropagatingTaskDecorator;

/**
 * The starter's task decorator: carries the caller's context to the executor's thread, as its superclass does, and
 * reports what the task itself left bound there ({@code FencingContext.bind} never closed), closed when the task
 * ends: counted in {@value FencingMetrics#LEFT_SCOPES} ({@code carrier=executor}) and logged at ERROR. Restoring the
 * thread would discard it anyway; without the report the task's bug (its later code ran under the token) goes unseen.
 */
final class LeftScopesTaskDecorator extends ContextPropagatingTaskDecorator {

    private static final String PLACE = "A task on a Spring executor (@Async, a Callable handler)";

    private final LeftScopes leaks;

    LeftScopesTaskDecorator(FencingMetrics metrics) {
        this.leaks = new LeftScopes(metrics, "executor", "task");
    }

    @Override
    public Runnable decorate(Runnable runnable) {
        // the caller's context is set around this runnable: the mark is taken once it is, so it is not reported
        return super.decorate(() -> leaks.run(PLACE, runnable));
    }
}
