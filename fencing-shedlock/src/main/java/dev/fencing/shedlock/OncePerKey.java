package dev.fencing.shedlock;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Which keys may be logged now: each at most once per interval, up to a bound of keys. Keys made per entity (a
 * ShedLock lock name {@code "invoice-" + id}) must neither grow the map for ever nor log a line each; once the bound is
 * reached, the key that reaches it is logged with a note that later ones are not, and no new key is. A key logged
 * once is logged again after the interval, so a line spent on one run (one that failed before its first write) does
 * not hide a later one for the life of the process. Thread-safe.
 */
final class OncePerKey {

    private final ConcurrentHashMap<String, Window> last = new ConcurrentHashMap<>();
    private final int max;
    private final long intervalMillis;
    private final AtomicBoolean full = new AtomicBoolean();

    OncePerKey(int max, long intervalMillis) {
        this.max = max;
        this.intervalMillis = intervalMillis;
    }

    /**
     * {@code null} when {@code key} is not to be logged at {@code now} (epoch milliseconds); else what its line ends
     * with: empty, or, for the key that reaches the bound, that no later key is logged.
     */
    String first(String key, long now) {
        Window window = last.get(key);
        if (window == null) {
            if (last.size() >= max) {
                return full.compareAndSet(false, true)
                        ? " (" + max + " lock names logged: from now on no new one is; every run is counted)" : null;
            }
            return last.putIfAbsent(key, new Window(now)) == null ? "" : first(key, now);
        }
        long before = window.logged.get();
        if (now - before >= intervalMillis && window.logged.compareAndSet(before, now)) {
            long skipped = window.skipped.sumThenReset();
            return skipped == 0 ? "" : " (" + skipped + " more since the last line, not logged)";
        }
        window.skipped.increment();
        return null;
    }

    /** When a key was last logged, and how often it came since. */
    private static final class Window {
        final AtomicLong logged;
        final java.util.concurrent.atomic.LongAdder skipped = new java.util.concurrent.atomic.LongAdder();

        Window(long now) {
            logged = new AtomicLong(now);
        }
    }

    /** How many keys are remembered; for tests. */
    int size() {
        return last.size();
    }
}
