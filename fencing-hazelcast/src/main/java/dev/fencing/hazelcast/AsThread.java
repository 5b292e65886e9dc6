package dev.fencing.hazelcast;

import com.hazelcast.internal.util.ThreadUtil;

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

    /** The Hazelcast thread id of the calling thread: the id its {@code FencedLock} calls are made as. */
    static long current() {
        return ThreadUtil.getThreadId();
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
