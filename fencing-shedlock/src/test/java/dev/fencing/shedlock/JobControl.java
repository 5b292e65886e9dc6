package dev.fencing.shedlock;

import dev.fencing.context.FencingContext;
import dev.fencing.token.FencingToken;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What one instance's job does on its first run (later runs do nothing): records the token bound for the ledger,
 * says it started, runs {@code pause} (a latch, or a line on stdin in a process), writes its value, records how
 * the write ended.
 */
public final class JobControl {

    private final String value;
    private final Runnable pause;
    private final AtomicBoolean ran = new AtomicBoolean();
    final CountDownLatch started = new CountDownLatch(1);
    final CountDownLatch done = new CountDownLatch(1);
    volatile FencingToken token;
    volatile String thread;
    volatile Throwable failure;
    volatile Runnable onStarted = () -> { };

    JobControl(String value, Runnable pause) {
        this.value = value;
        this.pause = pause;
    }

    void run(Ledger ledger) {
        if (!ran.compareAndSet(false, true)) {
            return;
        }
        try {
            token = FencingContext.current(SchedulerApp.RESOURCE);
            thread = Thread.currentThread().getName();
            started.countDown();
            onStarted.run();
            pause.run();
            ledger.write(value);
        } catch (RuntimeException | Error e) {
            failure = e;
        } finally {
            done.countDown();
        }
    }
}
