package dev.fencing.store;

import dev.fencing.recovery.FenceAdmin;
import dev.fencing.recovery.FenceInventory;
import dev.fencing.rule.FenceRule;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.token.FencingToken;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;

/**
 * A {@link FenceStore} in this JVM's memory: one slot (max_seen, its holder, a lock) per effective resource, so
 * memory is O(number of resources). Guarded calls to one resource are serialized by the slot's lock (reentrant, so
 * a fenced method may call another on the same resource); different resources do not contend. It protects writes
 * made inside this process only and forgets everything on restart; max_seen stays advanced when the write throws,
 * since nothing rolls the write back. Optionally bounded: {@link #InMemoryFenceStore(long)} refuses a token further
 * above max_seen than {@code maxAdvance}. Its own {@link FenceAdmin}: read, raise and lower max_seen. As a
 * {@link BracketFenceStore} it also fences a write run by its caller: the entry is the resource's slot, held by its
 * lock from {@link #enter} to {@link Entry#exit()}, so entering allocates nothing.
 */
public final class InMemoryFenceStore implements BracketFenceStore, FenceAdmin, FenceInventory {

    private final ConcurrentHashMap<String, Slot> slots = new ConcurrentHashMap<>();
    private final long maxAdvance;

    /** A store without a bound on one advance. */
    public InMemoryFenceStore() {
        this.maxAdvance = FenceRule.UNBOUNDED;
    }

    /**
     * A store that refuses, as {@link dev.fencing.rule.OutOfRangeTokenException}, a token more than
     * {@code maxAdvance} above a resource's max_seen; a resource's first token is accepted whatever its value.
     *
     * @throws IllegalArgumentException when {@code maxAdvance} is below 1
     */
    public InMemoryFenceStore(long maxAdvance) {
        this.maxAdvance = FenceRule.checkMaxAdvance("InMemoryFenceStore", maxAdvance);
    }

    @Override
    public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
        Entry entry = enter(resource, token);
        try {
            return write.proceed();
        } finally {
            entry.exit();
        }
    }

    /**
     * {@inheritDoc} The slot's lock is held from here to {@link Entry#exit()}: the same check and advance as
     * {@link #fence}, the write run by the caller in between.
     */
    @Override
    public Entry enter(String resource, FencingToken token) {
        if (!resource.equals(token.resource())) {
            throw new IllegalArgumentException("Token " + token + " was issued for resource '" + token.resource()
                    + "', not for '" + resource + "'");
        }
        Slot slot = slots.get(resource);
        if (slot == null) {
            slot = slots.computeIfAbsent(resource, unused -> new Slot());
        }
        slot.lock();
        boolean held = false;
        try {
            Verdict verdict = FenceRule.judge(slot.seen, slot.maxSeen, slot.holder, token, maxAdvance);
            if (!verdict.accepted()) {
                throw TokenRejectedException.of(resource, token, slot.maxSeen, verdict);
            }
            if (verdict == Verdict.ACCEPT_NEWER) {
                slot.seen = true;
                slot.maxSeen = token.value();
                slot.holder = token.holder();
            }
            held = true;
            return slot;
        } finally {
            if (!held) {
                slot.unlock();
            }
        }
    }

    /** The current max_seen of {@code resource}, empty when it never accepted a token. */
    @Override
    public OptionalLong maxSeen(String resource) {
        Slot slot = slots.get(resource);
        if (slot == null) {
            return OptionalLong.empty();
        }
        slot.lock();
        try {
            return slot.seen ? OptionalLong.of(slot.maxSeen) : OptionalLong.empty();
        } finally {
            slot.unlock();
        }
    }

    /**
     * Raises max_seen of {@code resource} to at least {@code value}, with no holder, so that tokens up to and
     * including {@code value} are rejected. Never lowers it. For restoring a floor known from elsewhere.
     */
    @Override
    public void raiseFloor(String resource, long value) {
        if (resource == null || resource.isBlank()) {
            throw new IllegalArgumentException("resource must not be blank");
        }
        if (value <= 0) {
            throw new IllegalArgumentException("floor for resource '" + resource + "' must be positive, was " + value);
        }
        Slot slot = slots.computeIfAbsent(resource, unused -> new Slot());
        slot.lock();
        try {
            if (!slot.seen || value > slot.maxSeen) {
                slot.seen = true;
                slot.maxSeen = value;
                slot.holder = null;
            }
        } finally {
            slot.unlock();
        }
    }

    @Override
    public long lowerMaxSeen(String resource, long floor) {
        FenceAdmin.checkLowering(resource, floor);
        Slot slot = slots.get(resource);
        if (slot == null) {
            throw FenceAdmin.unknownResource(resource);
        }
        slot.lock();
        try {
            if (!slot.seen) {
                throw FenceAdmin.unknownResource(resource);
            }
            long previous = slot.maxSeen;
            if (floor > previous) {
                throw FenceAdmin.notLowering(resource, floor, previous);
            }
            slot.seen = floor > 0;
            slot.maxSeen = floor;
            slot.holder = null;
            return previous;
        } finally {
            slot.unlock();
        }
    }

    /** {@inheritDoc} In {@link String#compareTo} order; sorts the store's keys on each call (an admin read). */
    @Override
    public List<String> resources(String after, int limit) {
        FenceInventory.checkLimit(limit);
        return slots.entrySet().stream()
                .filter(e -> after == null || e.getKey().compareTo(after) > 0)
                .filter(e -> maxSeen(e.getKey()).isPresent())
                .map(Map.Entry::getKey)
                .sorted()
                .limit(limit)
                .toList();
    }

    @Override
    public OptionalLong highestMaxSeen() {
        return slots.keySet().stream().map(this::maxSeen).filter(OptionalLong::isPresent)
                .mapToLong(OptionalLong::getAsLong).max();
    }

    /** How many resources this store remembers. */
    public int size() {
        return slots.size();
    }

    /**
     * One resource's max_seen, its holder, and the reentrant, non-fair lock that serializes its writes: the slot is
     * its own synchronizer (as {@link java.util.concurrent.locks.ReentrantLock} is, without the separate object it
     * keeps), which saves 16 bytes per resource and one dependent load per check.
     */
    private static final class Slot extends AbstractQueuedSynchronizer implements Entry {
        private static final long serialVersionUID = 1L;
        boolean seen;
        long maxSeen;
        String holder;

        void lock() {
            if (!compareAndSetState(0, 1)) {
                acquire(1);
            } else {
                setExclusiveOwnerThread(Thread.currentThread());
            }
        }

        void unlock() {
            release(1);
        }

        /** Unlocks; a thread that does not hold the slot gets an {@link IllegalMonitorStateException}. */
        @Override
        public void exit() {
            release(1);
        }

        @Override
        protected boolean tryAcquire(int acquires) {
            Thread current = Thread.currentThread();
            int held = getState();
            if (held == 0) {
                if (compareAndSetState(0, acquires)) {
                    setExclusiveOwnerThread(current);
                    return true;
                }
                return false;
            }
            if (getExclusiveOwnerThread() == current) {
                if (held + acquires < 0) {
                    throw new Error("Maximum lock count exceeded");
                }
                setState(held + acquires); // reentry: only the holder writes the count
                return true;
            }
            return false;
        }

        @Override
        protected boolean tryRelease(int releases) {
            if (getExclusiveOwnerThread() != Thread.currentThread()) {
                throw new IllegalMonitorStateException("The fence slot is not held by this thread");
            }
            int held = getState() - releases;
            boolean free = held == 0;
            if (free) {
                setExclusiveOwnerThread(null);
            }
            setState(held);
            return free;
        }

        @Override
        protected boolean isHeldExclusively() {
            return getExclusiveOwnerThread() == Thread.currentThread();
        }
    }
}
