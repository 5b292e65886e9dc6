package dev.fencing.boot.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ScheduledFuture;
import org.springframework.core.task.TaskDecorator;
import org.springframework.scheduling.concurrent.SimpleAsyncTaskScheduler;

/**
 * Boot's {@code taskScheduler} on virtual threads, with the task decorators applied to fixed-delay tasks too.
 * {@link SimpleAsyncTaskScheduler} runs a fixed-delay task ({@code @Scheduled(fixedDelay = ..)}) on its own scheduler
 * thread, one platform thread shared by every fixed-delay task, and applies its {@link TaskDecorator} only to the tasks
 * it hands to new threads. So the starter's decorator never ran around a fixed-delay run: what a run left bound (a
 * {@code FencingContext.bind} never closed) stayed on that thread, and the next runs of every fixed-delay task wrote
 * under its token, unreported. Here each such task is decorated once, when it is scheduled, as
 * {@code ThreadPoolTaskScheduler} does with every task: the context captured then is set around each run, and what a
 * run leaves bound is closed and reported ({@code fencing.scopes.left}, {@code carrier=executor}) when it ends.
 */
class DecoratedFixedDelayTaskScheduler extends SimpleAsyncTaskScheduler {

    private TaskDecorator decorator;

    @Override
    public void setTaskDecorator(TaskDecorator taskDecorator) {
        super.setTaskDecorator(taskDecorator);
        this.decorator = taskDecorator;
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Instant startTime, Duration delay) {
        return super.scheduleWithFixedDelay(decorated(task), startTime, delay);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Duration delay) {
        return super.scheduleWithFixedDelay(decorated(task), delay);
    }

    private Runnable decorated(Runnable task) {
        TaskDecorator current = decorator;
        return current == null ? task : current.decorate(task);
    }
}
