package dev.fencing.store;

import dev.fencing.recovery.IssuedTokens;
import dev.fencing.retention.CompactionResult;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.retention.ResourceFamily;
import dev.fencing.token.FencingToken;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Folds slots of an {@link InMemoryFenceStore} into their family's floor: the idle ones ({@link #compact}), or the
 * least recently advanced ones when a new resource would pass the store's bound ({@link #makeRoom}). A batch first
 * reads each family's highest max_seen, tells the issuer that floor, then retires each slot under its lock if it is
 * still free, unchanged above that floor and (for compaction) still idle. Never waits on a slot's lock.
 */
final class SlotFolding {

    /** A slot chosen for folding, with the time it last advanced when chosen. */
    private record Candidate(String resource, InMemoryFenceStore.Slot slot, long advancedAt) {
    }

    private static final System.Logger LOG = System.getLogger(SlotFolding.class.getName());

    private final InMemoryFenceStore store;
    private final ReentrantLock room = new ReentrantLock();

    SlotFolding(InMemoryFenceStore store) {
        this.store = store;
    }

    /** Folds every slot of a family idle for {@code idleNanos} or longer, {@code batchSize} per batch. */
    CompactionResult compact(long idleNanos, int batchSize, IssuerFloors issuer) {
        long folded = 0;
        int batches = 0;
        Set<String> families = new HashSet<>();
        List<Candidate> batch = new ArrayList<>(Math.min(batchSize, 1024));
        long now = store.now();
        for (Map.Entry<String, InMemoryFenceStore.Slot> e : store.slots().entrySet()) {
            InMemoryFenceStore.Slot slot = e.getValue();
            long advancedAt = slot.advancedAt;
            if (hasFamily(e.getKey()) && now - advancedAt >= idleNanos) {
                batch.add(new Candidate(e.getKey(), slot, advancedAt));
                if (batch.size() == batchSize) {
                    int n = fold(batch, issuer, idleNanos, families);
                    folded += n;
                    batches += n > 0 ? 1 : 0;
                    batch.clear();
                }
            }
        }
        if (!batch.isEmpty()) {
            int n = fold(batch, issuer, idleNanos, families);
            folded += n;
            batches += n > 0 ? 1 : 0;
        }
        return folded == 0 ? CompactionResult.NONE : new CompactionResult(folded, batches, families.size());
    }

    /**
     * The slot of a resource that had none, in a store at its bound: creates it first, from its family's floor as
     * it is now (so a token issued before the folding below raises that floor is still judged against the floor it
     * was issued above), then folds the least recently advanced free slots with a family, other than this one, down
     * to the bound less a sixteenth of it. One thread at a time; the others wait here.
     *
     * @throws FenceStoreException naming the resource and the bound when no slot could be folded; the new slot is
     *                             folded again (it holds nothing but the floor), every other slot is kept
     */
    InMemoryFenceStore.Slot admit(String resource, FencingToken token) {
        room.lock();
        try {
            InMemoryFenceStore.Slot existing = store.slots().get(resource);
            if (existing != null) {
                return existing; // made meanwhile (by a thread that found room, or admitted before): nothing added here
            }
            InMemoryFenceStore.Slot slot = store.slotOf(resource);
            int bound = store.bound();
            int size = store.slots().size();
            if (size <= bound) {
                return slot; // another thread made room meanwhile, or created this slot
            }
            int want = size - bound + Math.max(1, bound / 16);
            // slots a batch leaves (held meanwhile, advanced, or above every token the issuer handed out) are
            // passed over by the next batch, until the bound is kept or no slot is left to try
            Set<InMemoryFenceStore.Slot> left = Collections.newSetFromMap(new IdentityHashMap<>());
            List<Candidate> chosen = oldest(want, size - bound, slot, left);
            while (!chosen.isEmpty()) {
                fold(chosen, store.boundIssuer(), -1, new HashSet<>());
                int over = store.slots().size() - bound;
                if (over <= 0) {
                    break;
                }
                for (Candidate c : chosen) {
                    left.add(c.slot());
                }
                chosen = oldest(over + Math.max(1, bound / 16), over, slot, left);
            }
            if (store.slots().size() > bound) {
                if (slot.tryLockFree()) {
                    try {
                        if (!slot.retired) {
                            Long floor = store.floorOf(resource);
                            if (slot.seen && (floor == null || slot.maxSeen > floor)) {
                                // advanced by another thread since it was made here: keep its state (folding it
                                // would raise a floor the issuer was never told of)
                                return slot;
                            }
                            store.forget(resource, slot); // holds nothing above its family's floor: loses nothing
                        }
                    } finally {
                        slot.unlock();
                    }
                }
                throw new FenceStoreException(resource, token, "InMemoryFenceStore is full: it keeps "
                        + store.slots().size() + " resources, maxResources is " + bound + ", and none can be folded "
                        + "(each is held by a fenced call in progress, has no family, as resources without ':' "
                        + "have, or holds a max_seen above every token its issuer handed out, left for the reset); "
                        + "refusing resource '" + resource + "' rather than dropping state", null);
            }
            return slot;
        } finally {
            room.unlock();
        }
    }

    /**
     * Up to {@code n} of the least recently advanced slots that have a family and are free now, {@code except} and
     * the slots an earlier batch of this admission {@code left} aside,
     * and at least {@code need} of them when there are that many. A slot its holder checked again since the last
     * look (touched) is in use: it is chosen only when the others are fewer than {@code need}, least recently
     * advanced first, and its mark becomes its time here (a use now, as compaction counts it), so that it ages from
     * now on; a mark the bound never turned into a time kept a slot from ever being folded by it.
     */
    private List<Candidate> oldest(int n, int need, InMemoryFenceStore.Slot except, Set<InMemoryFenceStore.Slot> left) {
        PriorityQueue<Candidate> newestFirst = new PriorityQueue<>(n,
                Comparator.comparingLong(Candidate::advancedAt).reversed());
        List<InUse> inUse = new ArrayList<>();
        long now = store.now();
        for (Map.Entry<String, InMemoryFenceStore.Slot> e : store.slots().entrySet()) {
            InMemoryFenceStore.Slot slot = e.getValue();
            if (slot == except || !hasFamily(e.getKey()) || !slot.free() || left.contains(slot)) {
                continue;
            }
            if (slot.touched) { // read without the lock: a hint, turned into a time under it
                if (!slot.tryLockFree()) {
                    continue; // a fenced call holds it now
                }
                try {
                    long before = slot.advancedAt;
                    if (slot.noteUse(now)) {
                        inUse.add(new InUse(new Candidate(e.getKey(), slot, slot.advancedAt), before));
                        continue;
                    }
                } finally {
                    slot.unlock();
                }
            }
            long advancedAt = slot.advancedAt;
            if (newestFirst.size() < n) {
                newestFirst.add(new Candidate(e.getKey(), slot, advancedAt));
            } else if (advancedAt - newestFirst.peek().advancedAt() < 0) {
                newestFirst.poll();
                newestFirst.add(new Candidate(e.getKey(), slot, advancedAt));
            }
        }
        List<Candidate> chosen = new ArrayList<>(newestFirst);
        if (chosen.size() < need) {
            inUse.sort(Comparator.comparingLong(InUse::advancedBefore));
            for (int i = 0; i < inUse.size() && chosen.size() < need; i++) {
                chosen.add(inUse.get(i).candidate());
            }
        }
        return chosen;
    }

    /** A candidate's max_seen as a batch read it under the slot's lock. */
    private record Seen(String resource, long maxSeen) {
    }

    /** A slot in use since the last look, with the time it last advanced before that use was noted. */
    private record InUse(Candidate candidate, long advancedBefore) {
    }

    /**
     * One batch: reads each family's highest max_seen among the batch, raises the issuer's floor to it, then folds
     * each slot still free, not retired, at or below that floor and (when {@code idleNanos >= 0}) still idle.
     * Adds the families whose floor it raised to {@code families}; answers how many slots it folded.
     */
    private int fold(List<Candidate> batch, IssuerFloors issuer, long idleNanos, Set<String> families) {
        Map<String, List<Seen>> byFamily = new HashMap<>();
        for (Candidate c : batch) {
            if (c.slot().tryLockFree()) {
                try {
                    if (!c.slot().retired && c.slot().seen && !c.slot().touched) {
                        byFamily.computeIfAbsent(ResourceFamily.of(c.resource()), f -> new ArrayList<>())
                                .add(new Seen(c.resource(), c.slot().maxSeen));
                    }
                } finally {
                    c.slot().unlock();
                }
            }
        }
        Map<String, Long> highest = new HashMap<>();
        // asked outside the slots' locks: an issuer that can say what it handed out keeps a max_seen above all of it
        // (a forged token) out of the floor, as the JDBC store's compaction does; folded, it would refuse every
        // resource of the family for good (no reset lowers a floor), and the in-memory issuer's counters would be
        // exhausted. Such a slot stays (a reset lowers it), and raises no floor: told stays below it, so it is kept
        IssuedTokens issued = issuer instanceof IssuedTokens tokens ? tokens : null;
        for (Map.Entry<String, List<Seen>> family : byFamily.entrySet()) {
            List<Seen> rows = family.getValue();
            rows.sort(Comparator.comparingLong(Seen::maxSeen).reversed());
            int first = 0;
            // a max_seen at or below the family's floor raises nothing (a slot made from the floor, whose own
            // counter is lower, is one): only one above it is asked about
            Long floor = store.floorOf(rows.get(0).resource());
            while (issued != null && first < rows.size()
                    && rows.get(first).maxSeen() > (floor == null ? 0 : floor)
                    && rows.get(first).maxSeen() > issued.highestIssued(rows.get(first).resource())) {
                // compaction warns; the bound, which meets such a slot at every admission, says it at DEBUG
                System.Logger.Level level = idleNanos >= 0 ? System.Logger.Level.WARNING : System.Logger.Level.DEBUG;
                LOG.log(level, "InMemoryFenceStore left '" + rows.get(first).resource()
                        + "' unfolded: its max_seen " + rows.get(first).maxSeen() + " is above every token its issuer"
                        + " handed out (a forged or hand-made token reached the fence); folded, it would raise the"
                        + " floor of every resource of '" + family.getKey() + "' above every real token. Lower it with"
                        + " the max_seen reset (docs/operations.md)");
                first++;
            }
            if (first < rows.size()) {
                highest.put(family.getKey(), rows.get(first).maxSeen());
            }
        }
        highest.forEach(issuer::raiseFamilyFloor); // before the store's floor: the issuer issues above it first
        long now = store.now();
        int folded = 0;
        for (Candidate c : batch) {
            InMemoryFenceStore.Slot slot = c.slot();
            if (!slot.tryLockFree()) {
                continue; // a fenced call holds it now: not idle
            }
            try {
                String family = ResourceFamily.of(c.resource());
                Long told = highest.get(family);
                boolean unchanged = !slot.seen || (told != null && slot.maxSeen <= told);
                boolean idle = stillIdle(c, now, idleNanos); // first: it takes in a check by the holder since
                if (!slot.retired && unchanged && idle) {
                    store.retire(c.resource(), family, slot);
                    if (slot.seen) {
                        families.add(family);
                    }
                    folded++;
                }
            } finally {
                slot.unlock();
            }
        }
        return folded;
    }

    /**
     * Under the slot's lock: whether it is still idle, by {@code idleNanos} from {@code now}, or (when
     * {@code idleNanos < 0}) unchanged since it was chosen. A check by its holder since is a use at {@code now}
     * ({@link InMemoryFenceStore.Slot#noteUse}).
     */
    private static boolean stillIdle(Candidate c, long now, long idleNanos) {
        InMemoryFenceStore.Slot slot = c.slot();
        boolean used = slot.noteUse(now);
        return idleNanos < 0 ? !used && slot.advancedAt == c.advancedAt() : now - slot.advancedAt >= idleNanos;
    }

    private static boolean hasFamily(String resource) {
        return ResourceFamily.of(resource) != null;
    }
}
