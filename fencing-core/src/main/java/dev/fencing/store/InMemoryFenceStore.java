package dev.fencing.store;

import dev.fencing.context.MissingTokenException;
import dev.fencing.recovery.FenceAdmin;
import dev.fencing.recovery.FenceInventory;
import dev.fencing.recovery.ResetRefusedException;
import dev.fencing.retention.CompactionResult;
import dev.fencing.retention.FenceCompaction;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.retention.ResourceFamily;
import dev.fencing.rule.FenceRule;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.store.sql.FenceSql;
import dev.fencing.token.FencingToken;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * A {@link FenceStore} in this JVM's memory: one slot (max_seen, its holder, a lock) per effective resource, so
 * memory is O(number of resources). Guarded calls to one resource are serialized by the slot's lock (reentrant, so
 * a fenced method may call another on the same resource); different resources do not contend. It protects writes
 * made inside this process only and forgets everything on restart; max_seen stays advanced when the write throws,
 * since nothing rolls the write back. Optionally bounded: {@link #InMemoryFenceStore(long)} refuses a token further
 * above max_seen than {@code maxAdvance}. Its own {@link FenceAdmin}: read, raise and lower max_seen. As a
 * {@link BracketFenceStore} it also fences a write run by its caller: the entry is the resource's slot, held by its
 * lock from {@link #enter} to {@link Entry#exit()}, so entering allocates nothing.
 *
 * <p><b>Retention</b> ({@link FenceCompaction}): {@link #compact} folds the slots of resources not advanced for an
 * age into their family's floor ({@link ResourceFamily}), and a store built with {@link Builder#maxResources} folds
 * the least recently advanced slots whenever a new resource would pass the bound. A resource without a slot is
 * judged against its family's floor: its new slot starts at the floor, with no holder. A slot is folded only under
 * its lock, not held by any thread: it is marked retired, the floor raised, then it leaves the map, and a thread that
 * was waiting on its lock finds it retired and looks the resource up again.
 *
 * <p><b>Admin calls and fenced calls in progress</b>: {@link #maxSeen}, {@link #raiseFloor} and {@link #lowerMaxSeen}
 * take the resource's lock, so they answer after a fenced call in progress on it is over, and wait for it at most
 * {@link Builder#adminWait} (5 s by default, as the JDBC store's lock timeout): past that they fail with a
 * {@link FenceStoreException} (a lowering with a {@link ResetRefusedException}, as the JDBC store's) naming the
 * resource and the thread holding it, and change nothing. {@link #resources}
 * and {@link #highestMaxSeen} never wait: they read each resource's max_seen as it is, an advance in progress
 * included (it stays, whatever the write does).
 */
public final class InMemoryFenceStore implements BracketFenceStore, FenceAdmin, FenceInventory, FenceCompaction {

    /** How long admin calls wait for a fenced call in progress on their resource, by default. */
    public static final Duration DEFAULT_ADMIN_WAIT = Duration.ofSeconds(5);

    private final ConcurrentHashMap<String, Slot> slots = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Long> floors = new ConcurrentHashMap<>();
    private final long maxAdvance;
    private final int maxResources;
    private final IssuerFloors boundIssuer;
    private final LongSupplier nanoClock;
    private final long adminWaitNanos;
    private final Function<String, Slot> newSlot = this::newSlot;
    private final SlotFolding folding;

    /** A store without a bound on one advance. */
    public InMemoryFenceStore() {
        this(new Builder());
    }

    private InMemoryFenceStore(Builder b) {
        this.maxAdvance = b.maxAdvance;
        this.maxResources = b.maxResources;
        this.boundIssuer = b.issuerFloors;
        this.nanoClock = b.nanoClock;
        this.adminWaitNanos = b.adminWait.toNanos();
        this.folding = new SlotFolding(this);
    }

    /** Starts a builder: no bound on one advance, no bound on the number of resources. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A store that refuses, as {@link dev.fencing.rule.OutOfRangeTokenException}, a token more than
     * {@code maxAdvance} above a resource's max_seen; a resource's first token is accepted whatever its value.
     *
     * @throws IllegalArgumentException when {@code maxAdvance} is below 1
     */
    public InMemoryFenceStore(long maxAdvance) {
        this(new Builder().maxAdvance(maxAdvance));
    }

    @Override
    public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
        if (write == null) { // refused before the check: max_seen must not advance for a write that never runs
            throw new NullPointerException("InMemoryFenceStore.fence: the write for resource '" + resource
                    + "' is null (token " + token + "); nothing was checked");
        }
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
        if (resource == null) {
            throw new NullPointerException("InMemoryFenceStore: the resource to fence is null (token " + token
                    + "); nothing was checked");
        }
        requireIssuedFor(resource, token);
        return judged(lockedSlot(resource, token), resource, token);
    }

    /** Refuses a token issued for another resource than {@code resource} (the same instance is one comparison). */
    private static void requireIssuedFor(String resource, FencingToken token) {
        if (token == null) { // FencingContext.present(..) answers null when nothing is bound: refused, not an NPE
            throw new MissingTokenException(resource, "a check of InMemoryFenceStore");
        }
        String issuedFor = token.resource();
        if (issuedFor != resource && !resource.equals(issuedFor)) {
            throw new IllegalArgumentException("Token " + token + " was issued for resource '" + issuedFor
                    + "', not for '" + resource + "'");
        }
    }

    /**
     * {@inheritDoc} This store's lane keeps the resource's slot: one map lookup fewer per call, and a slot found
     * folded (retired) once locked is looked up again, as {@link #enter} does.
     */
    @Override
    public Lane lane(String resource) {
        return new SlotLane(this, Objects.requireNonNull(resource, "resource"));
    }

    /** Judges {@code token} on {@code slot}, which this thread holds: kept held when accepted, released otherwise. */
    private Entry judged(Slot slot, String resource, FencingToken token) {
        boolean held = false;
        try {
            Verdict verdict = FenceRule.judge(slot.seen, slot.maxSeen, slot.holder, token, maxAdvance);
            if (verdict == Verdict.REJECT_OUT_OF_RANGE && withinBoundOfFloor(resource, token)) {
                verdict = Verdict.ACCEPT_NEWER;
            }
            if (!verdict.accepted()) {
                throw TokenRejectedException.of(resource, token, slot.maxSeen, verdict);
            }
            if (verdict == Verdict.ACCEPT_NEWER) {
                slot.seen = true;
                slot.maxSeen = token.value();
                slot.holder = token.holder();
                slot.advancedAt = nanoClock.getAsLong();
            } else if (!slot.touched) {
                slot.touched = true; // its holder checked again: in use, as the JDBC store's updated_at says
            }
            held = true;
            return slot;
        } finally {
            if (!held) {
                slot.unlock();
            }
        }
    }

    /**
     * Whether {@code token} is within the bound on one advance of the resource's family floor: the issuer's next token
     * for a resource clears the floor (the highest max_seen the family's folded resources had), so the bound counts
     * from the higher of the two, as the JDBC stores' statements do. Only on the out-of-range path.
     */
    private boolean withinBoundOfFloor(String resource, FencingToken token) {
        Long floor = floorOf(resource);
        return floor != null && token.value() > floor && token.value() - floor <= maxAdvance;
    }

    /**
     * The resource's slot, locked and current (not retired), created when missing (starting at its family's floor).
     * Allocates nothing when the slot exists.
     *
     * @throws FenceStoreException when the store is at {@link Builder#maxResources} and no slot can be folded
     */
    private Slot lockedSlot(String resource, FencingToken token) {
        while (true) {
            Slot slot = slots.get(resource);
            if (slot == null) {
                slot = admitted(resource, token);
            }
            slot.lock();
            if (!slot.retired) {
                return slot;
            }
            slot.unlock(); // folded while this thread waited on its lock: its state is in the floor now
        }
    }

    /**
     * A new resource's slot, not locked: made from its family's floor, folding others first when the store is at its
     * {@link Builder#maxResources} bound.
     */
    private Slot admitted(String resource, FencingToken token) {
        return maxResources != Integer.MAX_VALUE && slots.size() >= maxResources
                ? folding.admit(resource, token)
                : slots.computeIfAbsent(resource, newSlot);
    }

    /** The lane of one resource: its slot, kept from the last call, locked and checked for having been folded. */
    private static final class SlotLane implements Lane {
        private final InMemoryFenceStore store;
        private final String resource;
        /** The slot found last; volatile, so a thread that reads it sees the slot as it was published. */
        private volatile Slot slot;

        SlotLane(InMemoryFenceStore store, String resource) {
            this.store = store;
            this.resource = resource;
        }

        @Override
        public Entry enter(FencingToken token) {
            requireIssuedFor(resource, token);
            Slot kept = slot;
            if (kept != null) {
                kept.lock();
                if (!kept.retired) {
                    return store.judged(kept, resource, token);
                }
                kept.unlock(); // folded since: its state is in the floor, and a new slot is made on demand
            }
            Slot found = store.lockedSlot(resource, token);
            slot = found;
            return store.judged(found, resource, token);
        }

        @Override
        public String toString() {
            return "InMemoryFenceStore.Lane[" + resource + "]";
        }
    }

    /**
     * For an admin call: the resource's slot, locked and current; created when missing and {@code create}, else
     * {@code null}. Waits for a fenced call in progress at most {@link Builder#adminWait}.
     *
     * @throws FenceStoreException when the wait ran out (nothing locked; a {@link ResetRefusedException} for a
     *                             reset, as the JDBC store's), or when a slot is to be made at the
     *                             {@link Builder#maxResources} bound and none can be folded
     */
    private Slot adminSlot(String operation, String resource, boolean create, boolean reset) {
        while (true) {
            Slot slot = slots.get(resource);
            if (slot == null) {
                if (!create) {
                    return null;
                }
                slot = admitted(resource, null);
            }
            if (!slot.lockWithin(adminWaitNanos)) {
                String message = "InMemoryFenceStore." + operation + ": a fenced call on resource '" + resource
                        + "' (" + slot.holderThread() + ") held it longer than the admin wait of "
                        + Duration.ofNanos(adminWaitNanos) + "; nothing was read or changed. Try again once the call "
                        + "is over (InMemoryFenceStore.Builder.adminWait)";
                throw reset ? new ResetRefusedException(resource, message)
                        : new FenceStoreException(resource, null, message, null);
            }
            if (!slot.retired) {
                return slot;
            }
            slot.unlock();
        }
    }

    private Slot newSlot(String resource) {
        Slot slot = new Slot();
        Long floor = floorOf(resource);
        if (floor != null) {
            slot.seen = true;
            slot.maxSeen = floor;
        }
        slot.advancedAt = nanoClock.getAsLong();
        return slot;
    }

    /**
     * The current max_seen of {@code resource}, empty when it never accepted a token; for a resource without a slot
     * (never seen, or folded), its family's floor; for a family's floor key, that family's floor. After a fenced
     * call in progress on the resource is over, waiting for it at most {@link Builder#adminWait}.
     *
     * @throws FenceStoreException when that call held the resource longer
     */
    @Override
    public OptionalLong maxSeen(String resource) {
        String floorOf = FenceSql.familyOfFloorKey(resource);
        if (floorOf != null) {
            return familyFloor(floorOf); // a family's floor key reads the floor, as in the JDBC store
        }
        Slot slot = adminSlot("maxSeen('" + resource + "')", resource, false, false);
        if (slot == null) {
            String family = ResourceFamily.of(resource);
            return family == null ? OptionalLong.empty() : familyFloor(family);
        }
        try {
            return slot.seen ? OptionalLong.of(slot.maxSeen) : OptionalLong.empty();
        } finally {
            slot.unlock();
        }
    }

    /**
     * Raises max_seen of {@code resource} to at least {@code value}, with no holder, so that tokens up to and
     * including {@code value} are rejected. Never lowers it. For restoring a floor known from elsewhere. Given a
     * family's floor key ({@link FenceSql#familyFloorKey}), raises that family's floor, as the JDBC store does.
     */
    @Override
    public void raiseFloor(String resource, long value) {
        if (resource == null || resource.isBlank()) {
            throw new IllegalArgumentException("resource must not be blank");
        }
        if (value <= 0) {
            throw new IllegalArgumentException("floor for resource '" + resource + "' must be positive, was " + value);
        }
        String floorOf = FenceSql.familyOfFloorKey(resource);
        if (floorOf != null) {
            floors.merge(floorOf, value, Math::max);
            return;
        }
        Slot slot = adminSlot("raiseFloor('" + resource + "', " + value + ")", resource, true, false);
        try {
            if (!slot.seen || value > slot.maxSeen) {
                slot.seen = true;
                slot.maxSeen = value;
                slot.holder = null;
                slot.advancedAt = nanoClock.getAsLong();
            } else if (value == slot.maxSeen) {
                slot.holder = null; // the holder's own token 'value' is refused from now on too
            }
        } finally {
            slot.unlock();
        }
    }

    @Override
    public long lowerMaxSeen(String resource, long floor) {
        return lower(resource, floor, -1);
    }

    /** {@inheritDoc} Judged under the resource's lock, as the lowering itself. */
    @Override
    public long lowerMaxSeen(String resource, long floor, long expected) {
        return lower(resource, floor, FenceAdmin.checkExpected(resource, expected));
    }

    /** Lowers max_seen of {@code resource} to {@code floor}, only while it is {@code expected} unless that is -1. */
    private long lower(String resource, long floor, long expected) {
        FenceAdmin.checkLowering(resource, floor);
        String operation = "lowerMaxSeen('" + resource + "', " + floor + ")";
        Slot slot = adminSlot(operation, resource, false, true);
        if (slot == null) {
            String family = ResourceFamily.of(resource);
            OptionalLong familyFloor = family == null ? OptionalLong.empty() : familyFloor(family);
            if (familyFloor.isEmpty()) {
                throw FenceAdmin.unknownResource(resource);
            }
            // folded: judged against its family's floor. Refused, or lowered to 0 (judged by that floor as it is),
            // before a slot is made: a slot of its own, at the bound, would fold other resources
            if (expected >= 0 && familyFloor.getAsLong() != expected) {
                throw FenceAdmin.changedMeanwhile(resource, expected, familyFloor.getAsLong());
            }
            if (floor > familyFloor.getAsLong()) {
                throw FenceAdmin.notLowering(resource, floor, familyFloor.getAsLong());
            }
            if (floor == 0) {
                return familyFloor.getAsLong();
            }
            slot = adminSlot(operation, resource, true, true); // lowered from its family's floor, in a slot of its own
        }
        try {
            if (slot.reentered()) {
                // this thread is inside a fenced call on the resource: forgetting would retire a slot that call holds
                // (and let another write run beside it), lowering would move max_seen under a write in progress
                throw new IllegalStateException("lowerMaxSeen('" + resource + "', " + floor + ") was called inside a "
                        + "fenced call on '" + resource + "' in the same thread; reset max_seen outside the "
                        + "resource's fenced calls (nothing was changed)");
            }
            if (!slot.seen) {
                throw FenceAdmin.unknownResource(resource);
            }
            long previous = slot.maxSeen;
            if (expected >= 0 && previous != expected) {
                throw FenceAdmin.changedMeanwhile(resource, expected, previous);
            }
            if (floor > previous) {
                throw FenceAdmin.notLowering(resource, floor, previous);
            }
            if (floor == 0) {
                forget(resource, slot); // as the JDBC store deletes the row: the family's floor judges it again
                return previous;
            }
            slot.maxSeen = floor;
            slot.holder = null;
            slot.advancedAt = nanoClock.getAsLong();
            return previous;
        } finally {
            slot.unlock();
        }
    }

    /**
     * {@inheritDoc} In {@link String#compareTo} order, with each family's floor key ({@link FenceSql#familyFloorKey})
     * as the JDBC store lists its floor rows; sorts the store's keys on each call (an admin read). Never waits for a
     * fenced call in progress: a resource whose first call is in progress is listed.
     */
    @Override
    public List<String> resources(String after, int limit) {
        FenceInventory.checkLimit(limit);
        return java.util.stream.Stream.concat(
                        slots.entrySet().stream().filter(e -> e.getValue().seenNow()).map(Map.Entry::getKey),
                        floors.keySet().stream().map(FenceSql::familyFloorKey))
                .filter(resource -> after == null || resource.compareTo(after) > 0)
                .sorted()
                .limit(limit)
                .toList();
    }

    /**
     * {@inheritDoc} Family floors count: a folded resource's max_seen lives on in its family's floor. Never waits for
     * a fenced call in progress: its advance counts (it stays, whatever the write does).
     */
    @Override
    public OptionalLong highestMaxSeen() {
        OptionalLong slotsMax = slots.values().stream().filter(Slot::seenNow).mapToLong(Slot::maxSeenNow).max();
        OptionalLong floorsMax = floors.values().stream().mapToLong(Long::longValue).max();
        if (slotsMax.isEmpty()) {
            return floorsMax;
        }
        return floorsMax.isEmpty() ? slotsMax : OptionalLong.of(Math.max(slotsMax.getAsLong(), floorsMax.getAsLong()));
    }

    /** How many resources this store keeps a slot for (folded resources have none). */
    public int size() {
        return slots.size();
    }

    /** The bound on {@link #size()} this store was built with; {@link Integer#MAX_VALUE} when unbounded. */
    public int maxResources() {
        return maxResources;
    }

    /**
     * {@inheritDoc} Idle means not advanced (nor raised, lowered or checked again by its holder) for {@code idleFor}
     * by this JVM's monotonic clock. A slot held by a thread (a fenced write in progress) is skipped, as is one that
     * advanced or was checked again since it was chosen.
     */
    @Override
    public CompactionResult compact(Duration idleFor, int batchSize, IssuerFloors issuer) {
        if (idleFor == null || idleFor.isNegative()) {
            throw new IllegalArgumentException("InMemoryFenceStore.compact: idleFor must not be negative, was "
                    + idleFor);
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("InMemoryFenceStore.compact: batchSize must be at least 1, was "
                    + batchSize);
        }
        if (issuer == null) {
            throw new IllegalArgumentException("InMemoryFenceStore.compact: issuer must not be null (use "
                    + "IssuerFloors.ONE_SEQUENCE when tokens come from one sequence for every resource)");
        }
        return folding.compact(idleFor.toNanos(), batchSize, issuer);
    }

    @Override
    public OptionalLong familyFloor(String family) {
        Long floor = family == null ? null : floors.get(family);
        return floor == null ? OptionalLong.empty() : OptionalLong.of(floor);
    }

    // --- for SlotFolding, the one class that folds slots ---

    ConcurrentHashMap<String, Slot> slots() {
        return slots;
    }

    /** The resource's slot, created when missing from its family's floor as it is now. */
    Slot slotOf(String resource) {
        return slots.computeIfAbsent(resource, newSlot);
    }

    long now() {
        return nanoClock.getAsLong();
    }

    int bound() {
        return maxResources;
    }

    IssuerFloors boundIssuer() {
        return boundIssuer;
    }

    /**
     * Folds a slot the caller holds exclusively (locked once, by {@link Slot#tryLockFree()}): raises its family's
     * floor to its max_seen, marks it retired and removes it. The caller unlocks it afterwards.
     */
    void retire(String resource, String family, Slot slot) {
        if (slot.seen) {
            floors.merge(family, slot.maxSeen, Math::max);
        }
        forget(resource, slot);
    }

    /**
     * Drops a slot the caller holds without keeping its state anywhere: the resource's next check makes a new slot
     * from its family's floor, if it has one. A thread waiting on its lock finds it retired and looks again.
     */
    void forget(String resource, Slot slot) {
        slot.retired = true;
        slots.remove(resource, slot);
    }

    /** The floor of {@code resource}'s family; {@code null} when it has no family or the family no floor. */
    Long floorOf(String resource) {
        String family = ResourceFamily.of(resource);
        return family == null ? null : floors.get(family);
    }

    /**
     * Configures an {@link InMemoryFenceStore}. Defaults: no bound on one advance, no bound on the number of
     * resources.
     */
    public static final class Builder {
        private long maxAdvance = FenceRule.UNBOUNDED;
        private int maxResources = Integer.MAX_VALUE;
        private IssuerFloors issuerFloors;
        private LongSupplier nanoClock = System::nanoTime;
        private Duration adminWait = DEFAULT_ADMIN_WAIT;

        private Builder() {
        }

        /**
         * How long {@link #maxSeen}, {@link #raiseFloor} and {@link #lowerMaxSeen} wait for a fenced call in progress
         * on their resource before they fail with a {@link FenceStoreException} (default 5 s): a writer paused inside
         * its call (a long GC, a stuck body) holds them no longer than that.
         *
         * @throws IllegalArgumentException when {@code adminWait} is null, zero, negative or above a day
         */
        public Builder adminWait(Duration adminWait) {
            if (adminWait == null || adminWait.isZero() || adminWait.isNegative()
                    || adminWait.compareTo(Duration.ofDays(1)) > 0) {
                throw new IllegalArgumentException("InMemoryFenceStore adminWait must be positive and at most a day, "
                        + "was " + adminWait);
            }
            this.adminWait = adminWait;
            return this;
        }

        /**
         * Refuses, as {@link dev.fencing.rule.OutOfRangeTokenException}, a token more than {@code maxAdvance} above
         * a resource's max_seen (or, when its family's floor is higher, above that floor: the issuer's next token
         * clears the floor).
         *
         * @throws IllegalArgumentException when {@code maxAdvance} is below 1
         */
        public Builder maxAdvance(long maxAdvance) {
            this.maxAdvance = FenceRule.checkMaxAdvance("InMemoryFenceStore", maxAdvance);
            return this;
        }

        /**
         * Keeps at most about {@code maxResources} slots (one more per thread creating a slot at the same moment):
         * a new resource past the bound first folds the least recently advanced slots (a sixteenth of the bound at
         * a time) that no thread holds into their family's floor, telling {@code issuer} first; slots whose holder
         * checked its token again since the bound last looked are in use, folded only when the others are too few.
         * Resources without a family are never folded; when no slot can be folded, the new resource's check fails
         * closed with a {@link FenceStoreException} and nothing is dropped.
         *
         * @param issuer the issuer of this store's tokens, told each family's new floor before the store raises it;
         *               {@link IssuerFloors#ONE_SEQUENCE} when its tokens come from one sequence for every resource
         * @throws IllegalArgumentException when {@code maxResources} is below 1 or {@code issuer} is null
         */
        public Builder maxResources(int maxResources, IssuerFloors issuer) {
            if (maxResources < 1) {
                throw new IllegalArgumentException("InMemoryFenceStore maxResources must be at least 1, was "
                        + maxResources);
            }
            if (issuer == null) {
                throw new IllegalArgumentException("InMemoryFenceStore maxResources(" + maxResources + ", issuer): "
                        + "issuer must not be null (IssuerFloors.ONE_SEQUENCE when tokens come from one sequence)");
            }
            this.maxResources = maxResources;
            this.issuerFloors = issuer;
            return this;
        }

        /** Test seam: the clock idle times are measured with. */
        Builder nanoClock(LongSupplier nanoClock) {
            this.nanoClock = nanoClock;
            return this;
        }

        /** Builds the store; the arguments were checked as they were set. */
        public InMemoryFenceStore build() {
            return new InMemoryFenceStore(this);
        }
    }

    /**
     * One resource's max_seen, its holder, and the reentrant, non-fair lock that serializes its writes: the slot is
     * its own synchronizer (as {@link java.util.concurrent.locks.ReentrantLock} is, without the separate object it
     * keeps), which saves 16 bytes per resource and one dependent load per check.
     *
     * <p>The lock is taken by a compare-and-set of {@link #owner} and given back by a volatile store, as
     * {@code ReentrantLock}'s is, so the unlock that follows sees every waiter queued before it: waiters park until
     * woken and keep their place in line. (From e4665f18 to 2026-12-07 it was given back by a release store, which
     * costs no locked instruction, 4-6 ns a call on the third machine's kind, but may miss a waiter queueing at that
     * very moment, so waiters parked for 8 to 64 ms at a time and looked again. A waiter whose period ran out left the
     * queue, by a walk of the whole queue, and joined it again at the tail: with thousands of waiters on one resource,
     * a virtual thread per request, that churn was quadratic, and 20,000 virtual threads on one slot took 9-37 s where
     * a {@code ReentrantLock} takes about 1 s; {@code VirtualThreadFencingTest}, docs/benchmarks.md.)
     */
    static final class Slot extends AbstractQueuedSynchronizer implements Entry {
        private static final long serialVersionUID = 1L;
        private static final VarHandle OWNER;
        private static final VarHandle SEEN;
        private static final VarHandle MAX_SEEN;

        static {
            try {
                MethodHandles.Lookup lookup = MethodHandles.lookup();
                OWNER = lookup.findVarHandle(Slot.class, "owner", Thread.class);
                SEEN = lookup.findVarHandle(Slot.class, "seen", boolean.class);
                MAX_SEEN = lookup.findVarHandle(Slot.class, "maxSeen", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /**
         * The thread holding the lock, {@code null} when it is free. The synchronizer's state counts the holder's
         * reentries beyond its first hold (written by the holder only, and only when it reenters). The holder also
         * sets the synchronizer's exclusive owner thread (plain stores, no locked instruction), which this lock does
         * not read but the JVM's tools do: a thread dump's "locked ownable synchronizers" and the owner a waiter waits
         * on, and {@code ThreadMXBean.findDeadlockedThreads} (jstack's "Found one Java-level deadlock").
         */
        private transient volatile Thread owner;
        boolean seen;
        /** Folded into its family's floor and out of the map: a thread that locks it looks the resource up again. */
        boolean retired;
        long maxSeen;
        /** When it last advanced (or was raised, lowered, created), by the store's monotonic clock. */
        long advancedAt;
        /**
         * Checked again by its holder (the same token) since folding last looked: in use, though not advanced. A
         * flag rather than a clock read, so that a repeated check costs no {@code nanoTime}; folding turns it into
         * {@link #advancedAt} ({@link #noteUse}).
         */
        boolean touched;
        String holder;

        void lock() {
            Thread current = Thread.currentThread();
            if (OWNER.compareAndSet(this, null, current)) {
                setExclusiveOwnerThread(current); // for thread dumps and deadlock detection only
            } else {
                acquire(1); // queues and parks until the unlock ahead wakes it; not interruptible, as lock() is
            }
        }

        /**
         * Takes the lock (or reenters it) when that takes at most {@code nanos}; whether it did. Not interruptible: an
         * interrupt is kept for the caller.
         */
        boolean lockWithin(long nanos) {
            Thread current = Thread.currentThread();
            if (OWNER.compareAndSet(this, null, current)) {
                setExclusiveOwnerThread(current);
                return true;
            }
            long deadline = System.nanoTime() + nanos;
            boolean interrupted = false;
            try {
                while (true) {
                    try {
                        return tryAcquireNanos(1, Math.max(0, deadline - System.nanoTime()));
                    } catch (InterruptedException e) {
                        interrupted = true; // cleared by the throw: the next wait runs for the time left
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /** Which thread holds it, for an error message: "held by thread 'name'", or "no longer held". */
        String holderThread() {
            Thread held = owner;
            return held == null ? "no longer held" : "held by thread '" + held.getName() + "'";
        }

        /** Without its lock, for admin listings: whether it has a max_seen now (never torn: a boolean). */
        boolean seenNow() {
            return (boolean) SEEN.getOpaque(this);
        }

        /** Without its lock, for admin listings: max_seen now, an advance in progress included. */
        long maxSeenNow() {
            return (long) MAX_SEEN.getOpaque(this);
        }

        void unlock() {
            release(1);
        }

        /**
         * Under its lock: moves a check by its holder since the last call into {@link #advancedAt} ({@code now}), and
         * says whether there was one.
         */
        boolean noteUse(long now) {
            if (!touched) {
                return false;
            }
            touched = false;
            advancedAt = now;
            return true;
        }

        /** Under its lock: whether the holder held it already when it last locked it (a call nested in its own). */
        boolean reentered() {
            return getState() > 0;
        }

        /** Whether no thread holds it now (a hint: {@link #tryLockFree()} decides). */
        boolean free() {
            return owner == null;
        }

        /** Locks it only when no thread holds it, this one included (a fenced call in progress is never folded). */
        boolean tryLockFree() {
            Thread current = Thread.currentThread();
            if (OWNER.compareAndSet(this, null, current)) {
                setExclusiveOwnerThread(current);
                return true;
            }
            return false;
        }

        /** Unlocks; a thread that does not hold the slot gets an {@link IllegalMonitorStateException}. */
        @Override
        public void exit() {
            release(1);
        }

        @Override
        protected boolean tryAcquire(int acquires) {
            Thread current = Thread.currentThread();
            Thread held = owner;
            if (held == null) {
                if (OWNER.compareAndSet(this, null, current)) {
                    setExclusiveOwnerThread(current);
                    return true;
                }
                return false;
            }
            if (held == current) {
                int reentries = getState();
                if (reentries + acquires < 0) {
                    throw new Error("Maximum lock count exceeded");
                }
                setState(reentries + acquires); // reentry: only the holder writes the count
                return true;
            }
            return false;
        }

        @Override
        protected boolean tryRelease(int releases) {
            if (owner != Thread.currentThread()) {
                throw new IllegalMonitorStateException("The fence slot is not held by this thread");
            }
            int reentries = getState();
            if (reentries > 0) {
                setState(reentries - releases);
                return false;
            }
            setExclusiveOwnerThread(null); // before the volatile store, which publishes it with the slot's fields
            OWNER.setVolatile(this, null); // then the wake-up that follows sees every waiter: see the class comment
            return true;
        }

        /** As {@code ReentrantLock} says it: the holder and its reentries, or unlocked (the state counts reentries). */
        @Override
        public String toString() {
            Thread held = owner;
            return "InMemoryFenceStore.Slot[" + (held == null ? "Unlocked"
                    : "Locked by thread " + held.getName() + (getState() > 0 ? ", reentered " + getState() : ""))
                    + ", max_seen " + (seen ? String.valueOf(maxSeen) : "none") + (retired ? ", retired" : "") + "]";
        }

        @Override
        protected boolean isHeldExclusively() {
            return owner == Thread.currentThread();
        }
    }
}
