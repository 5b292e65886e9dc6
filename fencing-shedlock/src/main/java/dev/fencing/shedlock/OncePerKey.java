package dev.fencing.shedlock;

import dev.fencing.guard.LogPace;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Which keys may be logged now: each at most once per interval, up to a bound of keys ({@link LogPace}). Keys made per
 * entity (a ShedLock lock name {@code "invoice-" + id}) must neither grow the map for ever nor log a line each; once
 * the bound is reached, the first key past it is logged with a note that later ones are not, and no new key is. A key
 * logged once is logged again after the interval, so a line spent on one run (one that failed before its first write)
 * does not hide a later one for the life of the process. Thread-safe.
 */
final class OncePerKey {

    private final LogPace pace;
    private final int max;
    private final AtomicBoolean full = new AtomicBoolean();

    OncePerKey(int max, long intervalMillis) {
        this.pace = new LogPace(max, intervalMillis, null);
        this.max = max;
    }

    /**
     * {@code null} when {@code key} is not to be logged at {@code now} (epoch milliseconds); else what its line ends
     * with: empty, how many lines of it were held back since its last one, or, for the first key past the bound, that
     * no later key is logged.
     */
    String first(String key, long now) {
        long heldBack = pace.due(key, now);
        if (heldBack == LogPace.FULL) {
            return full.compareAndSet(false, true)
                    ? " (" + max + " lock names logged: from now on no new one is; every run is counted)" : null;
        }
        if (heldBack < 0) {
            return null;
        }
        return heldBack == 0 ? "" : " (" + heldBack + " more since the last line, not logged)";
    }

    /** How many keys are remembered; for tests. */
    int size() {
        return pace.size();
    }
}
