package dev.fencing.hazelcast;

import com.hazelcast.internal.util.ThreadUtil;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Runs a {@code FencedLock} call as another thread: a {@code FencedLock} belongs to a (CP session, thread id) pair,
 * and Hazelcast's proxies read the thread id from {@link ThreadUtil} (Hazelcast's internal API, the thread's own id
 * unless set). Setting it for one call lets a lease be released, or checked, from any thread; the calling thread's
 * own id is restored afterwards.
 */
final class AsThread {

    private AsThread() {
    }

    /**
     * Ids of acquisitions, one each, above every real thread's id (a JVM numbers its threads from 1 up, and never
     * reaches 2^62): shared by every issuer of the process, so no two acquisitions on one CP session share an owner.
     */
    private static final AtomicLong ACQUISITIONS = new AtomicLong(1L << 62);

    /** The Hazelcast thread id of the calling thread: the id its {@code FencedLock} calls are made as. */
    static long current() {
        return ThreadUtil.getThreadId();
    }

    /** A Hazelcast thread id for one acquisition, no thread's and no other acquisition's. */
    static long acquisitionId() {
        return ACQUISITIONS.incrementAndGet();
    }

    static void run(long threadId, Runnable call) {
        call(threadId, () -> {
            call.run();
            return null;
        });
    }

    static <T> T call(long threadId, Supplier<T> call) {
        long own = ThreadUtil.getThreadId();
        if (own == threadId) {
            return call.get();
        }
        ThreadUtil.setThreadId(threadId);
        try {
            return call.get();
        } finally {
            if (own == Thread.currentThread().getId()) {
                ThreadUtil.removeThreadId();
            } else {
                ThreadUtil.setThreadId(own);
            }
        }
    }
}
