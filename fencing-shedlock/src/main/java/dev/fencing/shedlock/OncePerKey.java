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

    private final ConcurrentHashMap<String, AtomicLong> last = new ConcurrentHashMap<>();
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
        AtomicLong logged = last.get(key);
        if (logged == null) {
            if (last.size() >= max) {
                return full.compareAndSet(false, true)
                        ? " (" + max + " lock names logged: from now on no new one is; every run is counted)" : null;
            }
            AtomicLong created = new AtomicLong(now);
            return last.putIfAbsent(key, created) == null ? "" : null;
        }
        long before = logged.get();
        return now - before >= intervalMillis && logged.compareAndSet(before, now) ? "" : null;
    }

    /** How many keys are remembered; for tests. */
    int size() {
        return last.size();
    }
}
