package dev.fencing.boot.autoconfigure;

import dev.fencing.guard.LeftScopes;
import dev.fencing.metrics.FencingMetrics;
import java.util.concurrent.ScheduledFuture;
import org.springframework.scheduling.Trigger;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Boot's {@code taskScheduler} on platform threads, closing what a cron ({@link Trigger}) run leaves bound before
 * the next run is scheduled. {@link ThreadPoolTaskScheduler} decorates each run of a trigger task when it schedules
 * it, and schedules the next run at the end of the current one, on the same thread and inside the current run's
 * decorated scope: a binding the run left open (a {@code FencingContext.bind} never closed) was captured for the next
 * run, which bound it exactly and captured it again, so every later run of the job wrote under the leaked token, while
 * the task decorator closed and reported the leak after each run. Here the job itself is wrapped: what it leaves is
 * closed, counted in {@value FencingMetrics#LEFT_SCOPES} ({@code carrier=executor}) and logged at ERROR as soon as it
 * returns, before Spring schedules the next run. Fixed-rate and fixed-delay tasks are decorated once, when scheduled,
 * and need nothing more.
 */
class TriggerLeftScopesTaskScheduler extends ThreadPoolTaskScheduler {

    private static final String PLACE = "A scheduled task (a cron or Trigger task on Boot's taskScheduler)";

    private final LeftScopes leaks;

    TriggerLeftScopesTaskScheduler(FencingMetrics metrics) {
        this.leaks = new LeftScopes(metrics, "executor", "run");
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable task, Trigger trigger) {
        return super.schedule(() -> leaks.run(PLACE, task), trigger);
    }
}
