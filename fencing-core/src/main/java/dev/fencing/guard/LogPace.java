package dev.fencing.guard;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Internal: public for the header filters (fencing-web) and the fenced locks of ShedLock and Spring Integration, not
 * for applications.
 * The pace of a rate-limited log line: per key, at most one line per interval, and how many were held back since the
 * last. Keys are bounded, since some are made per entity or come from callers: past the bound a key shares the
 * overflow key, or, with none, is not logged at all ({@link #FULL}). Thread-safe; only on refusal and warning paths.
 */
public final class LogPace {

    /** {@link #due}: not now, a line of this key was logged within the interval. */
    public static final long NOT_NOW = -1;

    /** {@link #due}: the bound of keys is reached and there is no overflow key; the line is not logged. */
    public static final long FULL = -2;

    private final ConcurrentHashMap<String, Window> windows = new ConcurrentHashMap<>();
    private final int maxKeys;
    private final long intervalMillis;
    private final String overflowKey;

    /**
     * @param maxKeys        the most keys remembered
     * @param intervalMillis the least time between two lines of one key
     * @param overflowKey    the key of every key past the bound, or {@code null}: those are not logged
     */
    public LogPace(int maxKeys, long intervalMillis, String overflowKey) {
        this.maxKeys = maxKeys;
        this.intervalMillis = intervalMillis;
        this.overflowKey = overflowKey;
    }

    /**
     * Whether a line of {@code key} is due at {@code now} (epoch milliseconds): how many lines of it were held back
     * since its last one (0 or more) when it is, else {@link #NOT_NOW} (counted as held back) or {@link #FULL}.
     */
    public long due(String key, long now) {
        Window window = windows.get(key);
        if (window == null) {
            if (windows.size() >= maxKeys) {
                if (overflowKey == null) {
                    return FULL;
                }
                window = windows.computeIfAbsent(overflowKey, k -> new Window());
            } else {
                window = windows.computeIfAbsent(key, k -> new Window());
            }
        }
        return window.due(now, intervalMillis);
    }

    /** How many keys are remembered (the overflow key included); for tests. */
    public int size() {
        return windows.size();
    }

    /** When a key was last logged, and how often it came since. */
    private static final class Window {
        private final AtomicLong logged = new AtomicLong(Long.MIN_VALUE);
        private final LongAdder heldBack = new LongAdder();

        long due(long now, long intervalMillis) {
            long before = logged.get();
            if ((before == Long.MIN_VALUE || now - before >= intervalMillis) && logged.compareAndSet(before, now)) {
                return heldBack.sumThenReset();
            }
            heldBack.increment();
            return NOT_NOW;
        }
    }
}
