package dev.fencing.spring.support;

import org.springframework.core.MethodClassKey;

import java.lang.reflect.Method;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The fences already built, found by the identity of the invoked {@link Method} instance and target class: a proxy
 * class and a woven join point pass one {@code Method} instance of theirs on every call of a method, so a hit is a few
 * reference comparisons, small enough for the JIT to inline into the interceptor. A miss (a new method, or another
 * {@code Method} instance of a known one: {@code Class.getMethod} returns a new copy each time) is answered by the
 * caller's equality-keyed cache, which then {@link #put puts} the fence here. At most {@value #INSTANCES_PER_METHOD}
 * instances of one method are kept per class (the startup check's, the proxy's, the aspect's), so a caller passing a
 * new copy on every call stays on the equality-keyed cache and neither grows the table nor takes its lock. Reads
 * take no lock; writes copy the table under one; at most {@value #MAX_ENTRIES} entries.
 */
final class FenceTable {

    /** What {@link #find} returns for a method and class not in the table. */
    static final Object MISS = new Object();

    static final int MAX_ENTRIES = 4096;

    static final int INSTANCES_PER_METHOD = 4;

    private final int maxEntries;
    /** Open addressing, linear probing, at most half full; an array once published is never written again. */
    private volatile Entry[] entries = new Entry[16];
    /** Written under the lock; read without it, so that a full table costs a miss no lock. */
    private volatile int size;
    /** Per method (by equality) and class, how many of its instances the table holds; written under the lock. */
    private final ConcurrentHashMap<MethodClassKey, Integer> instances = new ConcurrentHashMap<>();

    FenceTable() {
        this(MAX_ENTRIES);
    }

    /** @param maxEntries how many entries to keep at most (tests use a small bound) */
    FenceTable(int maxEntries) {
        this.maxEntries = maxEntries;
    }

    /** The fence put for exactly this {@code Method} instance and class, or {@link #MISS}. */
    Object find(Method method, Class<?> type) {
        Entry[] table = entries;
        int mask = table.length - 1;
        int i = slot(method) & mask;
        Entry entry;
        while ((entry = table[i]) != null) {
            if (entry.method == method && entry.type == type) {
                return entry.fence;
            }
            i = (i + 1) & mask;
        }
        return MISS;
    }

    /**
     * Remembers {@code fence} for this {@code Method} instance and class, unless it is there already (the first entry
     * stays), {@value #INSTANCES_PER_METHOD} instances of an equal method are there for the class, or the table is
     * full. Takes the lock only when it adds.
     */
    void put(Method method, Class<?> type, Object fence) {
        if (size < maxEntries && held(method, type) < INSTANCES_PER_METHOD) {
            insert(method, type, fence);
        }
    }

    private int held(Method method, Class<?> type) {
        return instances.getOrDefault(new MethodClassKey(method, type), 0);
    }

    private synchronized void insert(Method method, Class<?> type, Object fence) {
        if (size >= maxEntries || held(method, type) >= INSTANCES_PER_METHOD || find(method, type) != MISS) {
            return;
        }
        Entry[] current = entries;
        int length = (size + 1) * 2 > current.length ? current.length * 2 : current.length;
        Entry[] copy = new Entry[length];
        for (Entry entry : current) {
            if (entry != null) {
                place(copy, entry);
            }
        }
        place(copy, new Entry(method, type, fence));
        instances.merge(new MethodClassKey(method, type), 1, Integer::sum);
        size++;
        entries = copy;
    }

    /** How many entries the table holds. */
    int size() {
        return size;
    }

    private static int slot(Method method) {
        return System.identityHashCode(method);
    }

    private static void place(Entry[] table, Entry entry) {
        int mask = table.length - 1;
        int i = slot(entry.method) & mask;
        while (table[i] != null) {
            i = (i + 1) & mask;
        }
        table[i] = entry;
    }

    private record Entry(Method method, Class<?> type, Object fence) {
    }
}
