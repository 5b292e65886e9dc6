package dev.fencing.shedlock;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Which keys were logged, each once, up to a bound: keys made per entity (a ShedLock lock name {@code "invoice-" + id})
 * must neither grow the set for ever nor log a line each. Once the bound is reached, the key that reaches it is logged
 * with a note that later ones are not, and no other key is. Thread-safe.
 */
final class OncePerKey {

    private final Set<String> seen = ConcurrentHashMap.newKeySet();
    private final int max;
    private final AtomicBoolean full = new AtomicBoolean();

    OncePerKey(int max) {
        this.max = max;
    }

    /**
     * {@code null} when {@code key} is not to be logged; else what its line ends with: empty, or, for the key that
     * reaches the bound, that no later key is logged.
     */
    String first(String key) {
        if (seen.contains(key)) {
            return null;
        }
        if (seen.size() < max) {
            return seen.add(key) ? "" : null;
        }
        return full.compareAndSet(false, true)
                ? " (" + max + " logged: from now on none is, the unchecked jobs go on unlogged)" : null;
    }

    /** How many keys are remembered; for tests. */
    int size() {
        return seen.size();
    }
}
