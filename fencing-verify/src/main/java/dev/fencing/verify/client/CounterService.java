package dev.fencing.verify.client;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import org.springframework.transaction.annotation.Transactional;

/**
 * One counter operation, the way an application writes it: {@code @Fenced(acquire = true)} with the resource's row
 * as the key takes the lock of {@code counter:<row>} around the transaction; inside, read the counter, pause a
 * random few milliseconds, write the counter plus one. Without the fence a holder paused past its lease writes back
 * a value others have already passed: their increments are lost.
 */
public class CounterService {

    /** The lock and fence resource of the counters (the key is the row). */
    public static final String RESOURCE = "counter";

    private final CounterRows rows;
    private final long maxSleepMillis;

    public CounterService(CounterRows rows, long maxSleepMillis) {
        this.rows = rows;
        this.maxSleepMillis = maxSleepMillis;
    }

    /** Increments the counter of resource {@code row}; returns the value written. */
    @Fenced(resource = RESOURCE, key = "#row", acquire = true)
    @Transactional
    public long increment(int row, Steps steps) throws InterruptedException {
        steps.acquired(FencingContext.current(RESOURCE + ":" + row));
        long value = rows.read(row);
        steps.read();
        Pauses.sleepUpTo(maxSleepMillis);
        steps.writing();
        rows.write(row, value + 1);
        steps.written();
        return value + 1;
    }
}
