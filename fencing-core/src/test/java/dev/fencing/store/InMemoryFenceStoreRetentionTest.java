package dev.fencing.store;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.retention.CompactionResult;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Retention of the in-memory store: compaction into family floors, the bound on slots, and their races. */
class InMemoryFenceStoreRetentionTest {

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final Map<String, Long> told = new ConcurrentHashMap<>();
    private final IssuerFloors recording = (family, floor) -> told.merge(family, floor, Math::max);

    private static FencingToken token(String resource, long value) {
        return new FencingToken(resource, value, "h" + value);
    }

    private static void write(InMemoryFenceStore store, String resource, long value) throws Throwable {
        store.fence(resource, token(resource, value), () -> null);
    }

    @Test
    void compactionFoldsIdleSlotsIntoTheirFamilysFloorAndAFoldedResourceStillRefusesOldTokens() throws Throwable {
        InMemoryFenceStore store = InMemoryFenceStore.builder().nanoClock(clock::get).build();
        write(store, "accounts:1", 5);
        write(store, "accounts:2", 9);
        write(store, "unkeyed", 4);
        clock.addAndGet(Duration.ofMinutes(10).toNanos());
        write(store, "accounts:3", 2); // advanced just now: not idle

        assertThat(store.compact(Duration.ofHours(1), 10, recording)).isEqualTo(CompactionResult.NONE);
        assertThat(store.size()).isEqualTo(4);

        CompactionResult result = store.compact(Duration.ofMinutes(5), 1, recording);

        assertThat(result).isEqualTo(new CompactionResult(2, 2, 1));
        assertThat(store.size()).isEqualTo(2);
        assertThat(store.familyFloor("accounts")).hasValue(9);
        assertThat(told).containsEntry("accounts", 9L).doesNotContainKey("unkeyed");
        assertThat(store.maxSeen("accounts:1")).hasValue(9);
        assertThat(store.maxSeen("accounts:3")).hasValue(2); // its own slot
        assertThat(store.maxSeen("unkeyed")).hasValue(4);
        assertThatThrownBy(() -> write(store, "accounts:1", 5)).isInstanceOf(TokenRejectedException.class);
        assertThatThrownBy(() -> write(store, "accounts:2", 9)).isInstanceOf(TokenRejectedException.class);
        assertThatThrownBy(() -> write(store, "accounts:7", 3)).isInstanceOf(TokenRejectedException.class);
        write(store, "accounts:1", 10);
        assertThat(store.maxSeen("accounts:1")).hasValue(10);
    }

    /**
     * With a bound on one advance, a resource far below its family's floor (a sibling acquired much more often, then
     * folded) takes the issuer's next token, which clears the floor: the bound counts from the floor, as the JDBC
     * stores' statements do (a trial: the busy sibling's every write was refused as out-of-range).
     */
    @Test
    void theBoundOnOneAdvanceCountsFromTheFamilysFloorAboveTheResourcesOwnMaxSeen() throws Throwable {
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxAdvance(10).nanoClock(clock::get).build();
        for (long value = 10; value <= 100; value += 10) {
            write(store, "accounts:idle", value);
        }
        clock.addAndGet(Duration.ofMinutes(10).toNanos());
        write(store, "accounts:busy", 5);
        store.compact(Duration.ofMinutes(5), 10, recording);
        assertThat(store.familyFloor("accounts")).hasValue(100);

        assertThatThrownBy(() -> write(store, "accounts:busy", 111)).as("beyond the bound of the floor too")
                .isInstanceOf(dev.fencing.rule.OutOfRangeTokenException.class);
        write(store, "accounts:busy", 101);

        assertThat(store.maxSeen("accounts:busy")).hasValue(101);
    }

    /**
     * A family's floor key raises and reads that family's floor, as the JDBC store's row of that key does; it made a
     * slot of that name before, which no check reads, and a new member of the family took tokens below the floor.
     */
    @Test
    void aFamilysFloorKeyRaisesAndReadsTheFamilysFloor() throws Throwable {
        InMemoryFenceStore store = InMemoryFenceStore.builder().nanoClock(clock::get).build();
        String floorKey = dev.fencing.store.sql.FenceSql.familyFloorKey("orders");

        store.raiseFloor(floorKey, 50);
        store.raiseFloor(floorKey, 20); // never lowers

        assertThat(store.familyFloor("orders")).hasValue(50);
        assertThat(store.maxSeen(floorKey)).hasValue(50);
        assertThat(store.resources(null, 10)).as("listed as the JDBC store lists its floor rows")
                .containsExactly(floorKey);
        assertThatThrownBy(() -> write(store, "orders:7", 50)).isInstanceOf(TokenRejectedException.class);
        write(store, "orders:7", 51);
        assertThat(store.maxSeen("orders:7")).hasValue(51);
    }

    @Test
    void aSlotHeldByAFencedCallIsNotFoldedEvenByItsOwnThread() throws Throwable {
        InMemoryFenceStore store = InMemoryFenceStore.builder().nanoClock(clock::get).build();
        BracketFenceStore.Entry entry = store.enter("accounts:1", token("accounts:1", 3));
        try {
            clock.addAndGet(Duration.ofHours(2).toNanos());
            assertThat(store.compact(Duration.ZERO, 10, recording)).isEqualTo(CompactionResult.NONE);
            assertThat(store.size()).isEqualTo(1);
        } finally {
            entry.exit();
        }
        assertThat(store.compact(Duration.ZERO, 10, recording).folded()).isEqualTo(1);
        assertThat(store.size()).isZero();
    }

    @Test
    void badArgumentsAreNamedAndChangeNothing() throws Throwable {
        InMemoryFenceStore store = InMemoryFenceStore.builder().nanoClock(clock::get).build();
        write(store, "accounts:1", 5);

        assertThatThrownBy(() -> store.compact(Duration.ofSeconds(-1), 10, recording))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("compact")
                .hasMessageContaining("idleFor").hasMessageContaining("PT-1S");
        assertThatThrownBy(() -> store.compact(Duration.ZERO, 0, recording))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("batchSize")
                .hasMessageContaining("was 0");
        assertThatThrownBy(() -> store.compact(Duration.ZERO, 1, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("issuer");
        assertThatThrownBy(() -> InMemoryFenceStore.builder().maxResources(0, recording))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxResources")
                .hasMessageContaining("was 0");
        assertThatThrownBy(() -> InMemoryFenceStore.builder().maxResources(10, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("issuer");

        assertThat(store.size()).isEqualTo(1);
        assertThat(store.maxSeen("accounts:1")).hasValue(5);
        assertThat(told).isEmpty();
        assertThat(store.familyFloor("accounts")).isEmpty();
    }

    /**
     * Many keys through a store bounded at 64 slots, with the in-memory issuer's tokens: the slot count never
     * passes the bound, a key touched all the time keeps its slot, and no current token is refused because the
     * issuer is told each floor first.
     */
    @Test
    void theBoundKeepsTheSlotCountBoundedUnderManyKeysAndTheIssuerIssuesAboveTheFloors() throws Throwable {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxResources(64, issuer).build();
        int maxSize = 0;
        for (int i = 0; i < 20_000; i++) {
            for (String resource : new String[] {"accounts:" + i, "accounts:hot"}) {
                try (Lease lease = issuer.acquire(resource, Duration.ofSeconds(1))) {
                    store.fence(resource, lease.token(), () -> null);
                }
                maxSize = Math.max(maxSize, store.size());
            }
        }
        assertThat(maxSize).isLessThanOrEqualTo(64);
        assertThat(store.slots()).containsKey("accounts:hot").hasSizeLessThanOrEqualTo(64);
        assertThat(store.familyFloor("accounts")).isPresent();
        // an evicted resource's old token is refused
        assertThatThrownBy(() -> write(store, "accounts:5", 1)).isInstanceOf(TokenRejectedException.class);
    }

    /** The check of a resource that has a slot allocates nothing in a bounded store either (allocation counted). */
    @Test
    void checkingAnExistingSlotOfABoundedStoreAllocatesNothing() {
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxResources(8, recording).build();
        int n = 20_000;
        FencingToken[] tokens = new FencingToken[2 * n];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = token("accounts:1", i + 1);
        }
        for (int i = 0; i < n; i++) { // warm up
            store.enter("accounts:1", tokens[i]).exit();
        }
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long before = threads.getThreadAllocatedBytes(Thread.currentThread().getId());
        for (int i = n; i < 2 * n; i++) {
            store.enter("accounts:1", tokens[i]).exit();
        }
        long allocated = threads.getThreadAllocatedBytes(Thread.currentThread().getId()) - before;
        assertThat(allocated).as("bytes allocated by %d checks", n).isLessThan(1024);
        assertThat(store.maxSeen("accounts:1")).hasValue(2L * n);
    }

    @Test
    void whenNoSlotCanBeFoldedANewResourceFailsClosedAndNothingIsDropped() throws Throwable {
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxResources(2, recording).build();
        write(store, "a", 1);
        write(store, "b", 1); // no family: never folded

        assertThatThrownBy(() -> write(store, "accounts:1", 1))
                .isInstanceOf(FenceStoreException.class).hasMessageContaining("accounts:1")
                .hasMessageContaining("maxResources is 2");
        assertThat(store.slots()).containsOnlyKeys("a", "b");

        InMemoryFenceStore keyed = InMemoryFenceStore.builder().maxResources(2, recording).build();
        BracketFenceStore.Entry one = keyed.enter("accounts:1", token("accounts:1", 1));
        BracketFenceStore.Entry two = keyed.enter("accounts:2", token("accounts:2", 1));
        try {
            assertThatThrownBy(() -> write(keyed, "accounts:3", 1)).isInstanceOf(FenceStoreException.class);
            assertThat(keyed.slots()).containsOnlyKeys("accounts:1", "accounts:2");
        } finally {
            two.exit();
            one.exit();
        }
        // its slot is made before accounts:1 and 2 are folded (floor 1): a token issued before that fold is accepted
        write(keyed, "accounts:3", 1);
        assertThat(keyed.slots()).containsOnlyKeys("accounts:3");
        assertThat(keyed.familyFloor("accounts")).hasValue(1);
        assertThat(told).containsEntry("accounts", 1L);
        assertThatThrownBy(() -> write(keyed, "accounts:1", 1)).isInstanceOf(TokenRejectedException.class);
    }

    /**
     * Writers fence a few resources of one family with the issuer's tokens, zombies present tokens of leases that
     * ended long ago, while compaction loops with no age and the bound (smaller than the number of resources)
     * evicts: slots are folded while threads wait on their locks. Every resource's accepted writes, in the order
     * they ran under its lock, never go back to an older token (an equal one is the same holder's token again, which
     * the rule accepts), so every zombie token older than an accepted one was refused.
     */
    @Test
    void acceptedTokensStayStrictlyIncreasingWhileSlotsAreFoldedUnderConcurrentChecks() throws Exception {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxResources(4, issuer).build();
        int resources = 8;
        Map<String, List<Long>> accepted = new ConcurrentHashMap<>();
        Map<String, List<FencingToken>> old = new ConcurrentHashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger compactions = new AtomicInteger();
        ExecutorService executor = Executors.newFixedThreadPool(6);
        try {
            List<Future<?>> work = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                boolean zombie = t == 3;
                work.add(executor.submit(() -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    for (int i = 0; i < 20_000; i++) {
                        String resource = "accounts:" + random.nextInt(resources);
                        FencingToken token;
                        if (zombie) {
                            List<FencingToken> tokens = old.get(resource);
                            if (tokens == null || tokens.isEmpty()) {
                                continue;
                            }
                            token = tokens.get(random.nextInt(tokens.size()));
                        } else {
                            try (Lease lease = issuer.acquire(resource, Duration.ofSeconds(10))) {
                                token = lease.token();
                            }
                            old.computeIfAbsent(resource, r -> Collections.synchronizedList(new ArrayList<>()))
                                    .add(token);
                        }
                        FencingToken presented = token;
                        try {
                            store.fence(resource, presented, () -> accepted.computeIfAbsent(resource,
                                    r -> Collections.synchronizedList(new ArrayList<>())).add(presented.value()));
                        } catch (TokenRejectedException | FenceStoreException refused) {
                            // a zombie, or a writer overtaken by a newer lease: refusals are what the fence is for
                        } catch (Throwable e) {
                            throw new AssertionError(e);
                        }
                    }
                    return null;
                }));
            }
            Future<?> compactor = executor.submit(() -> {
                while (!stop.get()) {
                    store.compact(Duration.ZERO, 1, issuer);
                    compactions.incrementAndGet();
                }
                return null;
            });
            for (Future<?> f : work) {
                f.get(60, TimeUnit.SECONDS);
            }
            stop.set(true);
            compactor.get(10, TimeUnit.SECONDS);
        } finally {
            stop.set(true);
            executor.shutdownNow();
        }

        assertThat(compactions.get()).isPositive();
        assertThat(store.familyFloor("accounts")).isPresent();
        assertThat(store.size()).isLessThanOrEqualTo(4 + 4);
        accepted.forEach((resource, tokens) -> {
            for (int i = 1; i < tokens.size(); i++) {
                // equal is the same token (its holder is derived from its value) presented again: accepted by the rule
                assertThat(tokens.get(i)).as("write %d of %s", i, resource).isGreaterThanOrEqualTo(tokens.get(i - 1));
            }
        });
    }

    /**
     * A lane keeps its resource's slot from call to call; once compaction has folded that slot into the family's
     * floor, the lane's next call finds the slot retired, looks the resource up again and is judged against the floor.
     */
    @Test
    void aLaneFindsItsSlotFoldedAndIsJudgedAgainstTheFloor() {
        InMemoryFenceStore store = InMemoryFenceStore.builder().nanoClock(clock::get).build();
        BracketFenceStore.Lane lane = store.lane("orders:eu");
        lane.enter(token("orders:eu", 5)).exit();
        lane.enter(token("orders:eu", 7)).exit();
        clock.addAndGet(Duration.ofHours(1).toNanos());
        assertThat(store.compact(Duration.ZERO, 10, recording).folded()).isEqualTo(1);
        assertThat(store.slots()).doesNotContainKey("orders:eu");

        assertThatThrownBy(() -> lane.enter(token("orders:eu", 7))).isInstanceOf(TokenRejectedException.class);
        assertThatThrownBy(() -> lane.enter(token("orders:eu", 6))).isInstanceOf(TokenRejectedException.class);
        lane.enter(token("orders:eu", 8)).exit();

        assertThat(store.slots()).containsKey("orders:eu");
        assertThat(store.maxSeen("orders:eu")).hasValue(8);
        assertThat(store.slots().get("orders:eu").free()).as("nothing left held").isTrue();
    }

    @Test
    void aLaneRefusesATokenOfAnotherResourceAndHoldsNothing() {
        InMemoryFenceStore store = InMemoryFenceStore.builder().build();
        BracketFenceStore.Lane lane = store.lane("orders");
        lane.enter(token("orders", 3)).exit();

        assertThatThrownBy(() -> lane.enter(token("ledger", 9))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("issued for resource 'ledger', not for 'orders'");
        assertThatThrownBy(() -> lane.enter(token("orders", 2))).isInstanceOf(TokenRejectedException.class);

        assertThat(store.maxSeen("orders")).hasValue(3);
        assertThat(store.slots()).containsOnlyKeys("orders");
        assertThat(store.slots().get("orders").free()).isTrue();
    }

    /**
     * Writers enter one resource through one shared lane with the issuer's tokens while compaction folds its slot in
     * a loop: every write runs on the resource's current slot, so the accepted tokens, in the order their writes ran,
     * never go back, and the highest one is the resource's max_seen.
     */
    @Test
    void aSharedLaneStaysMonotonicWhileItsSlotIsFoldedOverAndOver() throws Exception {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        InMemoryFenceStore store = InMemoryFenceStore.builder().build();
        BracketFenceStore.Lane lane = store.lane("orders:eu");
        List<Long> accepted = Collections.synchronizedList(new ArrayList<>());
        List<FencingToken> old = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong folded = new AtomicLong();
        ExecutorService executor = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> work = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                boolean zombie = t == 2;
                work.add(executor.submit(() -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    for (int i = 0; i < 20_000; i++) {
                        FencingToken token;
                        if (zombie) {
                            if (old.isEmpty()) {
                                continue;
                            }
                            token = old.get(random.nextInt(old.size()));
                        } else {
                            try (Lease lease = issuer.acquire("orders:eu", Duration.ofSeconds(10))) {
                                token = lease.token();
                            }
                            old.add(token);
                        }
                        BracketFenceStore.Entry entry;
                        try {
                            entry = lane.enter(token);
                        } catch (TokenRejectedException refused) {
                            continue; // a zombie, or a writer overtaken by a newer lease
                        }
                        try {
                            accepted.add(token.value());
                        } finally {
                            entry.exit();
                        }
                    }
                    return null;
                }));
            }
            Future<?> compactor = executor.submit(() -> {
                while (!stop.get()) {
                    folded.addAndGet(store.compact(Duration.ZERO, 1, issuer).folded());
                }
                return null;
            });
            for (Future<?> f : work) {
                f.get(60, TimeUnit.SECONDS);
            }
            stop.set(true);
            compactor.get(10, TimeUnit.SECONDS);
        } finally {
            stop.set(true);
            executor.shutdownNow();
        }

        assertThat(folded.get()).as("folds of the lane's slot").isPositive();
        assertThat(accepted).isNotEmpty();
        for (int i = 1; i < accepted.size(); i++) {
            // equal is the same token (its holder is derived from its value) presented again: accepted by the rule
            assertThat(accepted.get(i)).as("write %d", i).isGreaterThanOrEqualTo(accepted.get(i - 1));
        }
        long highest = accepted.stream().mapToLong(Long::longValue).max().orElseThrow();
        assertThat(store.maxSeen("orders:eu")).hasValue(highest);
    }

    /**
     * A thread found no slot for a resource without a family, then another made it and advanced it, and the store is
     * over its bound (a racing creator passed it): admitting the resource must return the slot with its state, not
     * drop it without a floor (a token older than its max_seen would then be accepted).
     */
    @Test
    void admittingAResourceThatAnotherThreadMadeMeanwhileKeepsItsState() throws Throwable {
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxResources(3, recording).build();
        write(store, "a", 1);
        write(store, "b", 1);
        write(store, "c", 5); // no family: never folded
        store.slotOf("d"); // made past the bound by a racing creator
        assertThat(store.size()).isEqualTo(4);

        InMemoryFenceStore.Slot admitted = new SlotFolding(store).admit("c", token("c", 6));

        assertThat(admitted).isSameAs(store.slots().get("c"));
        assertThat(store.maxSeen("c")).hasValue(5);
        assertThatThrownBy(() -> write(store, "c", 4)).isInstanceOf(TokenRejectedException.class);
    }

    /**
     * A new resource past the bound whose own slot cannot be folded back empty: a fold found nothing to fold (the one
     * other slot held by a fenced call) while another thread advanced the new slot. Folding it back would raise the
     * family's floor to 50 without telling the issuer (a review found that), and the issuer's next token for a new
     * key of the family would be refused as stale. The slot is kept (the bound passed by one) and judges the token.
     */
    @Test
    @Timeout(20)
    void aNewSlotAdvancedWhileItsAdmissionFoldsNothingIsKeptAndNoFloorIsRaisedUntold() throws Throwable {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        CountDownLatch telling = new CountDownLatch(1);
        CountDownLatch goOn = new CountDownLatch(1);
        AtomicBoolean first = new AtomicBoolean(true);
        IssuerFloors tellsThenWaitsOnce = (family, floor) -> {
            told.merge(family, floor, Math::max);
            issuer.raiseFamilyFloor(family, floor);
            if (first.compareAndSet(true, false)) {
                telling.countDown();
                await(goOn);
            }
        };
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxResources(1, tellsThenWaitsOnce).build();
        FencingToken one = acquired(issuer, "accounts:1");
        FencingToken twoFirst = acquired(issuer, "accounts:2");
        FencingToken twoLater = twoFirst;
        while (twoLater.value() < 50) {
            twoLater = acquired(issuer, "accounts:2");
        }
        FencingToken oneLater = acquired(issuer, "accounts:1");
        store.fence("accounts:1", one, () -> null); // the bound's one slot

        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Throwable> admitting = pool.submit(() -> thrownBy(() -> store.fence("accounts:2", twoFirst,
                    () -> null)));
            assertThat(telling.await(5, TimeUnit.SECONDS)).isTrue(); // its fold tells the issuer, then waits
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Future<Throwable> holder = pool.submit(() -> thrownBy(() -> store.fence("accounts:1", oneLater, () -> {
                holding.countDown();
                await(release);
                return null;
            })));
            assertThat(holding.await(5, TimeUnit.SECONDS)).isTrue(); // accounts:1 cannot be folded now
            store.fence("accounts:2", twoLater, () -> null); // the new slot, already in the map, advances to 50
            goOn.countDown();

            assertThat(admitting.get(5, TimeUnit.SECONDS)).as("the first token of accounts:2, judged on its slot")
                    .isInstanceOf(TokenRejectedException.class);
            release.countDown();
            assertThat(holder.get(5, TimeUnit.SECONDS)).isNull();
        } finally {
            pool.shutdownNow();
        }
        assertThat(store.maxSeen("accounts:2")).hasValue(twoLater.value());
        assertThat(told.getOrDefault("accounts", 0L)).as("the floor told to the issuer")
                .isGreaterThanOrEqualTo(store.familyFloor("accounts").orElse(0));
        FencingToken fresh = acquired(issuer, "accounts:3");
        store.fence("accounts:3", fresh, () -> null); // a new key of the family, under a lock just acquired
        assertThat(store.maxSeen("accounts:3")).hasValue(fresh.value());
    }

    /**
     * A lease that keeps writing under its one token is in use, though its max_seen does not move: compaction and
     * the bound leave its slot alone, as the JDBC store's updated_at does for the same holder's check. Folded, its
     * next write was refused as a duplicate of the floor it left.
     */
    @Test
    void aHolderCheckingItsTokenAgainKeepsItsSlotFromCompactionAndFromTheBound() throws Throwable {
        InMemoryFenceStore store = InMemoryFenceStore.builder().nanoClock(clock::get).build();
        FencingToken lease = token("accounts:7", 34);
        store.fence("accounts:7", lease, () -> null);
        write(store, "accounts:8", 3);
        for (int minute = 1; minute <= 10; minute++) {
            clock.addAndGet(Duration.ofMinutes(1).toNanos());
            store.fence("accounts:7", lease, () -> null);
        }
        assertThat(store.compact(Duration.ofMinutes(5), 10, recording)).isEqualTo(new CompactionResult(1, 1, 1));
        assertThat(store.maxSeen("accounts:8")).as("folded: its family's floor").hasValue(3);
        store.fence("accounts:7", lease, () -> null);
        clock.addAndGet(Duration.ofMinutes(6).toNanos());
        // a check by the holder counts as a use when compaction next looks (no clock read per check): kept once more
        assertThat(store.compact(Duration.ofMinutes(5), 10, recording)).isEqualTo(CompactionResult.NONE);
        clock.addAndGet(Duration.ofMinutes(6).toNanos()); // idle for longer than the age since that look
        assertThat(store.compact(Duration.ofMinutes(5), 10, recording).folded()).isEqualTo(1);
        assertThatThrownBy(() -> store.fence("accounts:7", lease, () -> null))
                .as("folded once idle: the floor has no holder").isInstanceOf(TokenRejectedException.class);

        InMemoryFenceStore bounded = InMemoryFenceStore.builder().maxResources(2, recording).nanoClock(clock::get)
                .build();
        FencingToken busy = token("orders:1", 5);
        bounded.fence("orders:1", busy, () -> null); // the least recently advanced
        clock.addAndGet(1);
        write(bounded, "orders:2", 6);
        clock.addAndGet(1);
        bounded.fence("orders:1", busy, () -> null); // but in use since
        write(bounded, "orders:3", 7); // past the bound: folds orders:2, the least recently used
        bounded.fence("orders:1", busy, () -> null);
        assertThat(bounded.maxSeen("orders:1")).hasValue(5);
        assertThat(bounded.size()).isEqualTo(2);
    }

    /**
     * A reset to 0 forgets a resource; in a compacted family its next token is judged against the family's floor (as
     * the JDBC store deletes its row), not taken as a first one whatever its value.
     */
    @Test
    void aResetToZeroInACompactedFamilyLeavesTheResourceToItsFamilysFloor() throws Throwable {
        InMemoryFenceStore store = InMemoryFenceStore.builder().nanoClock(clock::get).build();
        write(store, "accounts:1", 50);
        write(store, "accounts:2", 10);
        store.compact(Duration.ZERO, 10, recording);
        assertThat(store.familyFloor("accounts")).hasValue(50);
        write(store, "accounts:2", 60); // a slot of its own again

        assertThat(store.lowerMaxSeen("accounts:2", 0)).isEqualTo(60);

        assertThat(store.maxSeen("accounts:2")).hasValue(50);
        assertThatThrownBy(() -> write(store, "accounts:2", 5)).isInstanceOf(TokenRejectedException.class);
        write(store, "accounts:2", 51);
        write(store, "unkeyed", 9);
        assertThat(store.lowerMaxSeen("unkeyed", 0)).isEqualTo(9);
        assertThat(store.maxSeen("unkeyed")).as("no family: forgotten").isEmpty();
        write(store, "unkeyed", 1);
    }

    /**
     * Lowering a folded resource above its family's floor is bad input: refused with nothing changed, no slot made (a
     * review found a slot left behind and, at the bound, other live resources folded by its admission).
     */
    @Test
    void aRefusedLoweringOfAFoldedResourceLeavesNoTrace() throws Throwable {
        InMemoryFenceStore bounded = InMemoryFenceStore.builder().nanoClock(clock::get)
                .maxResources(2, recording).build();
        write(bounded, "acc:1", 10);
        bounded.compact(Duration.ZERO, 100, recording);      // acc:1 folded into the family's floor 10
        write(bounded, "b:1", 5);
        write(bounded, "b:2", 7);
        assertThat(bounded.size()).isEqualTo(2);

        assertThatThrownBy(() -> bounded.lowerMaxSeen("acc:1", 25)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("above its current max_seen 10");

        assertThat(bounded.size()).as("no slot made").isEqualTo(2);
        assertThat(bounded.familyFloor("b")).as("nothing folded").isEmpty();
        write(bounded, "b:1", 5);                              // its holder writes again
        assertThat(bounded.lowerMaxSeen("acc:1", 0)).as("judged by the family's floor as it is").isEqualTo(10);
        assertThat(bounded.size()).isEqualTo(2);
        assertThat(bounded.lowerMaxSeen("acc:1", 4)).isEqualTo(10);
        assertThat(bounded.maxSeen("acc:1")).hasValue(4);
    }

    private static FencingToken acquired(InMemoryTokenIssuer issuer, String resource) {
        try (Lease lease = issuer.acquire(resource, Duration.ofSeconds(1))) {
            return lease.token();
        }
    }

    /** A call that may throw anything, as {@link FenceStore#fence} does. */
    private interface Call {
        Object run() throws Throwable;
    }

    private static Throwable thrownBy(Call call) {
        try {
            call.run();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
