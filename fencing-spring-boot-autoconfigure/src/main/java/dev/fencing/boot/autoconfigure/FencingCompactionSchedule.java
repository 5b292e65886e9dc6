package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.retention.CompactionRun;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;
import org.springframework.scheduling.support.CronExpression;
import org.springframework.scheduling.support.CronTrigger;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;

/**
 * Runs a {@link CompactionRun} on its own single thread ({@code fencing-compaction}), never on the application's
 * scheduler, so turning compaction on schedules nothing else: on a cron expression when
 * {@code fencing.compaction.cron} is set, otherwise with a fixed delay after an initial delay. Started and stopped
 * with the application context; a run in progress at shutdown is interrupted, and what it committed stays.
 */
public final class FencingCompactionSchedule implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(FencingCompactionSchedule.class);

    private final CompactionRun run;
    private final CronTrigger cron;
    private final Duration interval;
    private final Duration initialDelay;
    private final Duration idleFor;
    private final int batchSize;
    private ThreadPoolTaskScheduler scheduler;

    FencingCompactionSchedule(CompactionRun run, FencingCompactionProperties properties) {
        this.run = run;
        String expression = properties.getCron();
        if (expression != null && !expression.isBlank()) {
            try {
                CronExpression.parse(expression);
            } catch (IllegalArgumentException e) {
                throw new FencingConfigurationException("fencing.compaction.cron '" + expression + "' is not a "
                        + "Spring cron expression (six fields: second minute hour day month weekday, e.g. "
                        + "'0 30 3 * * *'): " + e.getMessage());
            }
            this.cron = new CronTrigger(expression);
        } else {
            this.cron = null;
        }
        this.interval = positive("fencing.compaction.interval", properties.getInterval());
        Duration delay = properties.getInitialDelay();
        if (delay == null || delay.isNegative()) {
            throw new FencingConfigurationException("fencing.compaction.initial-delay must not be negative, was "
                    + delay);
        }
        this.initialDelay = delay;
        this.idleFor = properties.getIdleFor();
        this.batchSize = properties.getBatchSize();
    }

    private static Duration positive(String property, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new FencingConfigurationException(property + " must be positive, was " + value);
        }
        return value;
    }

    @Override
    public synchronized void start() {
        if (scheduler != null) {
            return;
        }
        ThreadPoolTaskScheduler started = new ThreadPoolTaskScheduler();
        started.setPoolSize(1);
        started.setThreadNamePrefix("fencing-compaction-");
        started.setDaemon(true);
        started.setWaitForTasksToCompleteOnShutdown(false);
        started.initialize();
        if (cron != null) {
            started.schedule(run, cron);
        } else {
            started.scheduleWithFixedDelay(run, Instant.now().plus(initialDelay), interval);
        }
        scheduler = started;
        log.info("Fence compaction scheduled " + (cron != null ? "on cron '" + cron.getExpression() + "' (next run "
                + CronExpression.parse(cron.getExpression()).next(ZonedDateTime.now()) + ")"
                : "every " + readable(interval) + ", the first in " + readable(initialDelay)) + ": resources idle for "
                + "over " + readable(idleFor) + " are folded into their family's floor, " + batchSize + " per "
                + "transaction, on a thread of its own");
    }

    @Override
    public synchronized void stop() {
        if (scheduler != null) {
            scheduler.shutdown();
            scheduler = null;
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return scheduler != null;
    }

    /** {@code 30d}, {@code 1h}, {@code 5m}, {@code 10s}, or ISO-8601 for what is not a whole number of one unit. */
    static String readable(Duration duration) {
        long seconds = duration.getSeconds();
        if (duration.getNano() != 0 || seconds == 0) {
            return duration.toString();
        }
        return seconds % 86_400 == 0 ? seconds / 86_400 + "d" : seconds % 3_600 == 0 ? seconds / 3_600 + "h"
                : seconds % 60 == 0 ? seconds / 60 + "m" : seconds + "s";
    }

    /** The schedule, for the actuator: a cron expression or the fixed delay. */
    @Override
    public String toString() {
        return cron != null ? "cron '" + cron.getExpression() + "'"
                : "every " + interval + " after " + initialDelay;
    }
}
