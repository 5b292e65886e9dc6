package dev.fencing.verify.client;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.token.FencingToken;
import org.springframework.transaction.annotation.Transactional;

/**
 * One append operation, the way an application writes it: {@code @Fenced(acquire = true)} with the resource's row
 * as the key takes the lock of {@code append:<row>} around the transaction; inside, pause a random few
 * milliseconds, then append {@code (resource, token, process, op)} to the log. A holder paused past its lease
 * appends after holders with larger tokens did: the log, read in its sequence order, shows the stale write.
 */
public class AppendService {

    /** The lock and fence resource of the logs (the key is the row). */
    public static final String RESOURCE = "append";

    private final AppendRows rows;
    private final long maxSleepMillis;

    public AppendService(AppendRows rows, long maxSleepMillis) {
        this.rows = rows;
        this.maxSleepMillis = maxSleepMillis;
    }

    /** Appends one row for resource {@code row}; returns the token it was written with. */
    @Fenced(resource = RESOURCE, key = "#row", acquire = true)
    @Transactional
    public long append(int row, String resource, int process, long op, Steps steps) throws InterruptedException {
        FencingToken granted = FencingContext.current(RESOURCE + ":" + row);
        steps.acquired(granted);
        steps.read();
        Pauses.sleepUpTo(maxSleepMillis);
        steps.writing();
        rows.append(row, resource, granted.value(), process, op);
        steps.written();
        return granted.value();
    }
}
