package dev.fencing.verify.client;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import org.springframework.transaction.annotation.Transactional;

import java.util.ArrayList;
import java.util.List;

/**
 * One lock-set operation, the way an application writes it: {@code @Fenced(acquire = true)} with the resource's
 * row as the key takes that resource's lock and token ({@code set:<row>}) before the transaction begins and gives
 * it back after it ends; inside, read the set, pause a random few milliseconds, write the set with the new element.
 * Whether the reads and writes are fenced is the repository's business ({@link FencedSetRows} or plain
 * {@link JdbcSetRows}), not this method's.
 */
public class LockSetService {

    private final SetRows rows;
    private final long maxSleepMillis;

    public LockSetService(SetRows rows, long maxSleepMillis) {
        this.rows = rows;
        this.maxSleepMillis = maxSleepMillis;
    }

    @Fenced(resource = ClientMain.RESOURCE, key = "#row", acquire = true)
    @Transactional
    public void add(int row, long element, Steps steps) throws InterruptedException {
        steps.acquired(FencingContext.current(ClientMain.RESOURCE + ":" + row));
        List<Long> set = new ArrayList<>(rows.read(row));
        steps.read();
        Pauses.sleepUpTo(maxSleepMillis);
        set.add(element);
        steps.writing();
        rows.write(row, set);
        steps.written();
    }
}
