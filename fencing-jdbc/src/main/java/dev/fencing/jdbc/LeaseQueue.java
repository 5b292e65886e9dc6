package dev.fencing.jdbc;

import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * The threads of one issuer waiting for the same resource's lease, in arrival order. Only the first of a resource's
 * line polls the lease table; the others park until they are first, and a release by this issuer wakes the first at
 * once. So the acquirers of one instance neither overtake each other (a newcomer trying at once while long waiters
 * slept up to the longest pause) nor leave a freed lease idle while they sleep. Acquirers of other instances still
 * poll: across instances the lease goes to whoever tries first. A resource's line is removed when its last waiter
 * leaves it.
 */
final class LeaseQueue {

    private final ConcurrentHashMap<String, ArrayDeque<Thread>> lines = new ConcurrentHashMap<>();

    /** Whether any thread waits for {@code resource}'s lease: a newcomer then queues behind it instead of trying. */
    boolean waiting(String resource) {
        return lines.containsKey(resource);
    }

    /** Puts the current thread at the end of {@code resource}'s line; whether it is the first. */
    boolean join(String resource) {
        Thread me = Thread.currentThread();
        boolean[] first = new boolean[1];
        lines.compute(resource, (r, waiting) -> {
            ArrayDeque<Thread> line = waiting != null ? waiting : new ArrayDeque<>();
            line.addLast(me);
            first[0] = line.peekFirst() == me;
            return line;
        });
        return first[0];
    }

    /** Whether the current thread is first in {@code resource}'s line. */
    boolean first(String resource) {
        return head(resource) == Thread.currentThread();
    }

    /** The first of {@code resource}'s line, or {@code null}; read under the map's lock of the key, as lines change. */
    private Thread head(String resource) {
        Thread[] head = new Thread[1];
        lines.computeIfPresent(resource, (r, line) -> {
            head[0] = line.peekFirst();
            return line;
        });
        return head[0];
    }

    /** Takes the current thread out of {@code resource}'s line; the next first, if any, is woken to try. */
    void leave(String resource) {
        Thread me = Thread.currentThread();
        Thread[] next = new Thread[1];
        lines.computeIfPresent(resource, (r, line) -> {
            boolean wasFirst = line.peekFirst() == me;
            line.removeFirstOccurrence(me);
            if (wasFirst) {
                next[0] = line.peekFirst();
            }
            return line.isEmpty() ? null : line;
        });
        if (next[0] != null) {
            LockSupport.unpark(next[0]);
        }
    }

    /** Wakes the first waiter for {@code resource}, if any: this issuer just freed its lease. */
    void freed(String resource) {
        Thread first = head(resource);
        if (first != null) {
            LockSupport.unpark(first);
        }
    }

    /** How many threads wait for {@code resource}; for tests. */
    int waiters(String resource) {
        int[] count = new int[1];
        lines.computeIfPresent(resource, (r, line) -> {
            count[0] = line.size();
            return line;
        });
        return count[0];
    }
}
