package dev.fencing.testsupport;

import dev.fencing.retention.CompactionResult;
import dev.fencing.retention.FenceCompaction;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.store.FenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The behaviour every {@link FenceCompaction} must have, written once: idle per-entity state folded into family
 * floors (and nothing else), a folded resource judged against its floor, the issuer told before a floor rises,
 * batches that each commit on their own, bad input refused, and safety while writers keep fencing. An implementation
 * provides {@link #newSubject()}: a store and its compaction over state no other test shares (a fresh table), and
 * {@link #closeSubject} to drop it.
 */
public abstract class FenceCompactionContract {

    /** A store and the compaction of its state. */
    public record Subject(FenceStore store, FenceCompaction compaction) {
    }

    /** A store and its compaction over fresh, empty state (no other test's resources). */
    protected abstract Subject newSubject();

    /**
     * How long each writer of {@link #concurrentWritersNeverGetAStaleTokenAcceptedWhileCompactionRuns} pauses
     * between writes; 0 by default. A compaction that waits between its steps (the JDBC store on H2 waits out the
     * check statements in flight) folds only keys left alone meanwhile, so its writers must leave keys idle.
     */
    protected long writerPauseMillis() {
        return 0;
    }

    /**
     * Whether the store judges the token before the write runs, holding the resource's lock until the write commits
     * (then the writes of one resource run one at a time, in the order they were judged); {@code false} for a store
     * that sends its checks with the commit (the write runs first, and a refusal rolls it back).
     */
    protected boolean checksBeforeTheWrite() {
        return true;
    }

    /** Drops what {@link #newSubject()} created; the default does nothing. */
    protected void closeSubject(Subject subject) {
    }

    private Subject subject;
    private String family;

    @BeforeEach
    void openSubject() {
        subject = newSubject();
        family = "acct" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void dropSubject() {
        closeSubject(subject);
    }

    private FenceStore store() {
        return subject.store();
    }

    private FenceCompaction compaction() {
        return subject.compaction();
    }

    private String key(Object id) {
        return family + ":" + id;
    }

    private void write(String resource, long value, String holder) throws Throwable {
        store().fence(resource, new FencingToken(resource, value, holder), () -> null);
    }

    private Throwable refusal(String resource, long value, String holder) {
        try {
            write(resource, value, holder);
            return null;
        } catch (Throwable e) {
            return e;
        }
    }

    /** Long enough for a row written before it to be older than a cutoff a little shorter than it. */
    private static void pause(long millis) throws InterruptedException {
        Thread.sleep(millis);
    }

    @Test
    void idleRowsAreFoldedIntoTheirFamilysHighestMaxSeenFreshAndUnkeyedOnesAreKept() throws Throwable {
        String unkeyed = "unkeyed" + UUID.randomUUID().toString().substring(0, 8);
        write(key(1), 10, "a");
        write(key(2), 70, "a");
        write(key(3), 30, "a");
        write(unkeyed, 100, "a");
        pause(3000);
        write(key("fresh"), 5, "a");

        // the fresh row stays younger than the cutoff unless this thread stalls for 2.5 s before compacting
        CompactionResult result = compaction().compact(Duration.ofMillis(2500), 100, IssuerFloors.ONE_SEQUENCE);

        assertThat(result.folded()).isEqualTo(3);
        assertThat(result.families()).isEqualTo(1);
        assertThat(result.batches()).isEqualTo(1);
        assertThat(compaction().familyFloor(family)).hasValue(70);
        // key 1's own row (10) is gone: 11 is judged against the floor 70
        assertThat(refusal(key(1), 11, "a")).isInstanceOf(StaleTokenException.class);
        // the fresh row is its own: 6 is above its 5, though below the floor
        assertThat(refusal(key("fresh"), 6, "a")).isNull();
        // the unkeyed resource kept its row: 50 is stale against its 100
        assertThat(refusal(unkeyed, 50, "b")).isInstanceOf(StaleTokenException.class);
        assertThat(compaction().compact(Duration.ofHours(1), 100, IssuerFloors.ONE_SEQUENCE))
                .isEqualTo(CompactionResult.NONE);
    }

    @Test
    void aFoldedResourceIsJudgedAgainstItsFloorAndGetsItsOwnStateAgain() throws Throwable {
        String r = key(42);
        write(r, 10, "zombie");
        pause(20);
        assertThat(compaction().compact(Duration.ZERO, 10, IssuerFloors.ONE_SEQUENCE).folded()).isEqualTo(1);
        assertThat(compaction().familyFloor(family)).hasValue(10);

        // the case: the holder of 9 (and of 10) comes back right after the row was compacted
        assertThat(refusal(r, 9, "older")).isInstanceOf(StaleTokenException.class);
        assertThat(refusal(r, 10, "zombie")).isInstanceOf(DuplicateTokenException.class);
        // a resource of the family never seen before is judged the same way
        assertThat(refusal(key("never-seen"), 3, "x")).isInstanceOf(StaleTokenException.class);

        assertThat(refusal(r, 11, "next")).isNull();
        assertThat(refusal(r, 11, "next")).as("the same holder again: its own row").isNull();
        assertThat(refusal(r, 11, "other")).isInstanceOf(DuplicateTokenException.class);
        assertThat(refusal(r, 12, "later")).isNull();
        assertThat(compaction().familyFloor(family)).hasValue(10);
    }

    /**
     * A family is the text before the last {@code ':'}: a nested family ({@code f:eu}), one ending in {@code ':'}
     * ({@code f:}) and one the family's name is a prefix of ({@code fx}) each keep a floor of their own, and a folded
     * resource is judged against its own family's floor, never a lower one of a family whose name shares its prefix.
     */
    @Test
    @Timeout(60)
    void eachFamilyIsJudgedAgainstItsOwnFloorNeverOneOfAFamilySharingItsPrefix() throws Throwable {
        String nested = family + ":eu";
        String colon = family + ":";
        String longer = family + "x";
        write(nested + ":1", 100, "a");
        write(colon + ":1", 60, "a");
        write(key(1), 5, "a");
        write(longer + ":1", 7, "a");
        pause(20);

        CompactionResult result = compaction().compact(Duration.ZERO, 100, IssuerFloors.ONE_SEQUENCE);

        assertThat(result.folded()).isEqualTo(4);
        assertThat(result.families()).isEqualTo(4);
        assertThat(compaction().familyFloor(nested)).hasValue(100);
        assertThat(compaction().familyFloor(colon)).hasValue(60);
        assertThat(compaction().familyFloor(family)).hasValue(5);
        assertThat(compaction().familyFloor(longer)).hasValue(7);
        // below their own family's floor, above the floor of the family their name starts with
        assertThat(refusal(nested + ":1", 99, "z")).isInstanceOf(StaleTokenException.class);
        assertThat(refusal(nested + ":2", 50, "z")).isInstanceOf(StaleTokenException.class);
        assertThat(refusal(colon + ":2", 59, "z")).isInstanceOf(StaleTokenException.class);
        assertThat(refusal(longer + ":2", 6, "z")).isInstanceOf(StaleTokenException.class);
        // above their own family's floor, below a floor of a family their name is a prefix of
        assertThat(refusal(key(2), 6, "n")).isNull();
        assertThat(refusal(longer + ":1", 8, "n")).isNull();
        assertThat(compaction().familyFloor(family)).hasValue(5);
    }

    /**
     * A later compaction that folds a resource with a lower max_seen than the family's floor keeps the floor: a floor
     * is raised to the higher of the two, never set to the batch's highest, or a token between the two would be
     * accepted for a resource folded earlier.
     */
    @Test
    @Timeout(60)
    void aLaterCompactionNeverLowersAFloor() throws Throwable {
        write(key(1), 70, "a");
        pause(3000);
        write(key(2), 10, "a");   // a row of its own below the floor about to be raised: its first token
        // folds key 1 only, unless this thread stalls for 2.5 s before compacting (then both, and the floor is 70)
        compaction().compact(Duration.ofMillis(2500), 100, IssuerFloors.ONE_SEQUENCE);
        assertThat(compaction().familyFloor(family)).hasValue(70);
        pause(20);
        compaction().compact(Duration.ZERO, 100, IssuerFloors.ONE_SEQUENCE);   // folds key 2 (10)
        assertThat(compaction().familyFloor(family)).hasValue(70);
        assertThat(refusal(key(1), 11, "b")).as("11 after 70 was accepted").isInstanceOf(StaleTokenException.class);
        assertThat(refusal(key(2), 69, "b")).isInstanceOf(StaleTokenException.class);
    }

    @Test
    void batchesCommitOneByOneAndTheIssuerIsToldBeforeEachFloorRises() throws Throwable {
        for (int i = 1; i <= 5; i++) {
            write(key(i), i * 10L, "a");
        }
        pause(20);
        List<long[]> calls = new CopyOnWriteArrayList<>();   // {told, floor committed when told (-1: none)}
        IssuerFloors issuer = (f, floor) -> {
            assertThat(f).isEqualTo(family);
            OptionalLong current = compaction().familyFloor(f);
            calls.add(new long[] {floor, current.orElse(-1)});
        };

        CompactionResult result = compaction().compact(Duration.ZERO, 2, issuer);

        assertThat(result).isEqualTo(new CompactionResult(5, 3, 1));
        assertThat(calls).hasSize(3);
        long highestTold = -1;
        for (long[] call : calls) {
            // what earlier batches folded is committed (readable from elsewhere) before the next one starts, and
            // no floor ever rose above what the issuer had been told
            assertThat(call[1]).isEqualTo(highestTold);
            highestTold = Math.max(highestTold, call[0]);
        }
        assertThat(highestTold).isEqualTo(50);
        assertThat(compaction().familyFloor(family)).hasValue(50);
    }

    @Test
    void badInputNamesTheValueAndChangesNothing() throws Throwable {
        write(key(1), 10, "a");
        pause(20);
        assertThatThrownBy(() -> compaction().compact(Duration.ofSeconds(-1), 10, IssuerFloors.ONE_SEQUENCE))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("idleFor")
                .hasMessageContaining("PT-1S");
        assertThatThrownBy(() -> compaction().compact(Duration.ZERO, 0, IssuerFloors.ONE_SEQUENCE))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("batchSize")
                .hasMessageContaining("was 0");
        assertThat(compaction().familyFloor(family)).isEmpty();
        // key 1 still has its own row, holder included: its holder presenting 10 again is accepted (against a
        // floor of 10, which has no holder, it would be a duplicate)
        assertThat(refusal(key(1), 10, "a")).as("same holder, own row").isNull();
    }

    /**
     * Writers fence many keys of one family with tokens from one sequence (some of them stale on purpose) while the
     * compaction folds everything idle for 0 ms, over and over: no write is accepted with a token at or below one
     * that was committed for the same key before its call started; and, for a store that judges before the write,
     * every key's accepted tokens are strictly increasing in the order the writes ran (one write per key at a time).
     */
    @Test
    void concurrentWritersNeverGetAStaleTokenAcceptedWhileCompactionRuns() throws Exception {
        int keys = 12;
        AtomicLong sequence = new AtomicLong(1);
        Map<String, List<Long>> accepted = new ConcurrentHashMap<>();
        Map<String, List<Long>> presented = new ConcurrentHashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong folded = new AtomicLong();
        AtomicLong refusedStale = new AtomicLong();
        AtomicLong other = new AtomicLong();
        AtomicLong zombies = new AtomicLong();
        Map<String, List<long[]>> committed = new ConcurrentHashMap<>();   // {token, started, returned}
        Map<String, Boolean> failures = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(5);
        try {
            List<Future<?>> writers = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                String writer = "writer-" + w;
                writers.add(pool.submit(() -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    while (!stop.get()) {
                        String r = key(random.nextInt(keys));
                        List<Long> earlier = presented.computeIfAbsent(r, k -> new CopyOnWriteArrayList<>());
                        boolean zombie = random.nextInt(3) == 0 && !earlier.isEmpty();
                        // a zombie presents an old token again, each time as a holder of its own (the same holder
                        // presenting its own token again is accepted by the rule)
                        long value = zombie ? earlier.get(random.nextInt(earlier.size())) : sequence.getAndIncrement();
                        String holder = zombie ? "zombie-" + zombies.incrementAndGet() : writer;
                        earlier.add(value);
                        long start = System.nanoTime();
                        try {
                            store().fence(r, new FencingToken(r, value, holder), () -> {
                                if (checksBeforeTheWrite()) {
                                    accepted.computeIfAbsent(r, k -> new CopyOnWriteArrayList<>()).add(value);
                                }
                                return null;
                            });
                            committed.computeIfAbsent(r, k -> new CopyOnWriteArrayList<>())
                                    .add(new long[] {value, start, System.nanoTime()});
                        } catch (TokenRejectedException e) {
                            refusedStale.incrementAndGet();
                        } catch (Throwable e) {
                            other.incrementAndGet();   // busy or conflict: retryable, not a verdict
                            failures.put(e.getClass().getSimpleName(), true);
                        }
                        if (writerPauseMillis() > 0) {
                            Thread.sleep(random.nextLong(writerPauseMillis() * 2));
                        }
                    }
                    return null;
                }));
            }
            Future<?> compactor = pool.submit(() -> {
                while (!stop.get()) {
                    try {
                        folded.addAndGet(compaction().compact(Duration.ZERO, 4, IssuerFloors.ONE_SEQUENCE).folded());
                    } catch (RuntimeException e) {
                        other.incrementAndGet();   // the table lock not granted in time: tried again
                        failures.put("compaction: " + e.getClass().getSimpleName(), true);
                    }
                }
                return null;
            });
            Thread.sleep(3000);
            stop.set(true);
            for (Future<?> writer : writers) {
                writer.get(30, TimeUnit.SECONDS);
            }
            compactor.get(30, TimeUnit.SECONDS);
        } finally {
            stop.set(true);
            pool.shutdownNow();
            assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(folded.get()).as("rows folded while writers ran").isGreaterThanOrEqualTo(keys / 2);
        assertThat(refusedStale.get()).as("stale and duplicate tokens refused").isPositive();
        long total = committed.values().stream().mapToLong(List::size).sum();
        assertThat(total).as("writes accepted").isGreaterThan(keys);
        assertThat(other.get()).as("busy or conflicting attempts, of kinds " + failures.keySet()).isLessThan(total);
        Map<String, List<Long>> violations = new HashMap<>();
        accepted.forEach((r, values) -> {
            for (int i = 1; i < values.size(); i++) {
                if (values.get(i) <= values.get(i - 1)) {
                    violations.put(r, values);
                    break;
                }
            }
        });
        assertThat(violations).as("keys whose accepted tokens did not strictly increase").isEmpty();
        // whatever the store's mode: a write accepted after another write of the same key had returned (committed)
        // must carry a larger token
        List<String> late = new ArrayList<>();
        committed.forEach((r, writes) -> {
            for (long[] earlier : writes) {
                for (long[] later : writes) {
                    if (earlier[2] < later[1] && later[0] <= earlier[0]) {
                        late.add(r + ": " + later[0] + " accepted after " + earlier[0] + " had committed");
                    }
                }
            }
        });
        assertThat(late).as("writes accepted with a token at or below one committed before").isEmpty();
    }
}
