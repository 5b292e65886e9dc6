package dev.fencing.verify.client;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.token.FencingToken;
import org.springframework.transaction.annotation.Transactional;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One lock-set operation, the way an application writes it: {@code @Fenced(acquire = true)} takes the lock and its
 * token before the transaction begins and gives it back after it ends; inside, read the set, pause a random few
 * milliseconds, write the set with the new element. Whether the reads and writes are fenced is the repository's
 * business ({@link FencedSetRows} or plain {@link JdbcSetRows}), not this method's.
 */
public class LockSetService {

    /** What the operation tells its recorder as it goes. */
    public interface Steps {
        /** The lock was granted with {@code token}; the critical section begins. */
        void acquired(FencingToken token);

        /** The set was read; the write comes next (the window a pause turns into a zombie). */
        void read(List<Long> set);

        /** The write is about to be sent. */
        void writing();

        /**
         * The write statement returned; only the commit (and the lock's release) remain. A failure before this point
         * rolled the transaction back; from here on the outcome of a failure is unknown.
         */
        default void written() {
        }
    }

    private final SetRows rows;
    private final long maxSleepMillis;

    public LockSetService(SetRows rows, long maxSleepMillis) {
        this.rows = rows;
        this.maxSleepMillis = maxSleepMillis;
    }

    @Fenced(resource = ClientMain.RESOURCE, acquire = true)
    @Transactional
    public void add(long element, Steps steps) throws InterruptedException {
        steps.acquired(FencingContext.current(ClientMain.RESOURCE));
        List<Long> set = new ArrayList<>(rows.read());
        steps.read(set);
        long sleep = ThreadLocalRandom.current().nextLong(maxSleepMillis + 1);
        if (sleep > 0) {
            Thread.sleep(sleep);
        }
        set.add(element);
        steps.writing();
        rows.write(set);
        steps.written();
    }
}
