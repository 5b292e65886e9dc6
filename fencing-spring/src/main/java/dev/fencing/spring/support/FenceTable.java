package dev.fencing.spring.support;

import java.lang.reflect.Method;

/**
 * The fences already built, found by the identity of the invoked {@link Method} instance and target class: the proxy
 * and the woven aspect pass the same {@code Method} instance on every call of a method (a proxy class's or a join
 * point's own), so a hit is a few reference comparisons, small enough for the JIT to inline into the interceptor.
 * A miss (a new method, or another {@code Method} instance of a known one) is answered by the caller's equality-keyed
 * cache, which then {@link #put puts} the fence here. Reads take no lock; writes copy the table under one; at most
 * {@value #MAX_ENTRIES} entries are kept, after which misses are simply not remembered.
 */
final class FenceTable {

    /** What {@link #find} returns for a method and class not in the table. */
    static final Object MISS = new Object();

    static final int MAX_ENTRIES = 4096;

    /** Open addressing, linear probing, at most half full; an array once published is never written again. */
    private volatile Entry[] entries = new Entry[16];
    /** Written under the lock; read without it, so that a full table costs a miss no lock. */
    private volatile int size;

    /** The fence put for exactly this {@code Method} instance and class, or {@link #MISS}. */
    Object find(Method method, Class<?> type) {
        Entry[] table = entries;
        int mask = table.length - 1;
        int i = System.identityHashCode(method) & mask;
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
     * Remembers {@code fence} for this {@code Method} instance and class, unless an entry for them exists (the first
     * one stays) or the table is full.
     */
    void put(Method method, Class<?> type, Object fence) {
        if (size < MAX_ENTRIES) {
            insert(method, type, fence);
        }
    }

    private synchronized void insert(Method method, Class<?> type, Object fence) {
        if (find(method, type) != MISS || size >= MAX_ENTRIES) {
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
        size++;
        entries = copy;
    }

    /** How many entries the table holds. */
    int size() {
        return size;
    }

    private static void place(Entry[] table, Entry entry) {
        int mask = table.length - 1;
        int i = System.identityHashCode(entry.method) & mask;
        while (table[i] != null) {
            i = (i + 1) & mask;
        }
        table[i] = entry;
    }

    private record Entry(Method method, Class<?> type, Object fence) {
    }
}
