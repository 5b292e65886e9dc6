package dev.fencing.store;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.recovery.MaxSeenReset;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
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
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The in-memory store's retention under load (folding by compaction and by the bound, resets, floor keys, families
 * of families): once a token T was accepted for a resource, no token at or below T (but T by its own holder) is
 * accepted for it again.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RetentionUnderLoadTest {

    private static final String[] RESOURCES = {
            "a", "a:b", "a:b:c", "a:b:d", "a:b:c:1", "a:b:c:2", "a:x", "a::", "a:b:", "q:1", "q:2", "q:3", "q:4",
            "q:5", "q:6", "q:7", "q:8", "q:9", "q:1:1", "q:1:2"};

    private static FencingToken token(String resource, long value, String holder) {
        return new FencingToken(resource, value, holder);
    }

    @Test
    void familiesOfFamiliesKeepEveryFoldedTokenRefused() throws Throwable {
        InMemoryFenceStore store = new InMemoryFenceStore();
        store.fence("a:b:c", token("a:b:c", 10, "h10"), () -> null);
        store.fence("a:b", token("a:b", 5, "h5"), () -> null);
        store.fence("a", token("a", 3, "h3"), () -> null);
        store.fence("a:b:", token("a:b:", 7, "h7"), () -> null);
        store.compact(Duration.ZERO, 1, IssuerFloors.ONE_SEQUENCE);
        assertThat(store.familyFloor("a:b")).hasValue(10);
        assertThat(store.familyFloor("a")).hasValue(5);
        assertThat(store.size()).isEqualTo(1); // "a" has no family
        for (long v = 1; v <= 10; v++) {
            long value = v;
            assertThatThrownBy(() -> store.fence("a:b:c", token("a:b:c", value, "other"), () -> null))
                    .isInstanceOf(TokenRejectedException.class);
        }
        for (long v = 1; v <= 5; v++) {
            long value = v;
            assertThatThrownBy(() -> store.fence("a:b", token("a:b", value, "other"), () -> null))
                    .isInstanceOf(TokenRejectedException.class);
        }
        for (long v = 1; v <= 7; v++) {
            long value = v;
            assertThatThrownBy(() -> store.fence("a:b:", token("a:b:", value, "other"), () -> null))
                    .isInstanceOf(TokenRejectedException.class);
        }
        assertThatCode(() -> store.fence("a:b:c", token("a:b:c", 11, "h11"), () -> null)).doesNotThrowAnyException();
        assertThatCode(() -> store.fence("a:b", token("a:b", 6, "h6"), () -> null)).doesNotThrowAnyException();
    }

    @Test
    void theIssuerToldAFloorIssuesAboveItForEveryMemberIncludingOnesWithOlderCounters() throws Throwable {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer(Duration.ofSeconds(30), 0);
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxResources(2, issuer).build();
        List<FencingToken> issued = new ArrayList<>();
        for (String r : new String[] {"f:1", "f:1", "f:1", "f:2", "f:3", "f:4", "f:1:x", "f:1"}) {
            try (Lease lease = issuer.acquire(r, Duration.ofSeconds(1))) {
                issued.add(lease.token());
                store.fence(r, lease.token(), () -> null);
            }
        }
        for (FencingToken old : issued) {
            assertThatThrownBy(() -> store.fence(old.resource(), token(old.resource(), old.value(), "zombie"),
                    () -> null)).isInstanceOf(TokenRejectedException.class);
        }
    }

    /**
     * Writers (real leases, and zombies replaying old tokens), compaction with no idle age, the bound, and resets to
     * the issuer's highest token, all at once; every accepted token is recorded under the slot's lock.
     */
    @Test
    void acceptedTokensStayIncreasingPerResourceUnderFoldingBoundResetsAndZombies() throws Exception {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer(Duration.ofMillis(3), 0);
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxResources(6, issuer).build();
        MaxSeenReset reset = new MaxSeenReset(store, issuer, new AdminMetrics(new SimpleMeterRegistry()));
        Map<String, List<FencingToken>> accepted = new ConcurrentHashMap<>();
        for (String r : RESOURCES) {
            accepted.put(r, Collections.synchronizedList(new ArrayList<>()));
        }
        Map<String, BracketFenceStore.Lane> lanes = new ConcurrentHashMap<>();
        List<FencingToken> pool = new CopyOnWriteArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong acceptedCount = new AtomicLong();
        ExecutorService threads = Executors.newFixedThreadPool(7);
        List<Future<?>> futures = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            futures.add(threads.submit(() -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                while (!stop.get()) {
                    String r = RESOURCES[rnd.nextInt(RESOURCES.length)];
                    FencingToken t;
                    if (rnd.nextInt(40) == 0) {
                        // a forged token (no signing, no bound): accepted, then undone by the resets
                        t = new FencingToken(r, Long.MAX_VALUE - rnd.nextInt(1000), "forged-" + rnd.nextInt(1000));
                    } else if (rnd.nextInt(4) == 0 && !pool.isEmpty()) {
                        t = pool.get(rnd.nextInt(pool.size()));
                        r = t.resource();
                    } else {
                        try (Lease lease = issuer.acquire(r, Duration.ofMillis(50))) {
                            t = lease.token();
                        } catch (RuntimeException e) {
                            continue;
                        }
                        if (pool.size() < 5000) {
                            pool.add(t);
                        }
                    }
                    if (rnd.nextBoolean()) {
                        Thread.yield();
                    }
                    String resource = r;
                    FencingToken presented = t;
                    try {
                        int how = rnd.nextInt(3);
                        Runnable record = () -> {
                            accepted.get(resource).add(presented);
                            acceptedCount.incrementAndGet();
                        };
                        if (how == 0) {
                            store.fence(resource, presented, () -> {
                                record.run();
                                return null;
                            });
                        } else if (how == 1) {
                            BracketFenceStore.Lane lane = lanes.computeIfAbsent(resource, store::lane);
                            BracketFenceStore.Entry e = lane.enter(presented);
                            try {
                                record.run();
                            } finally {
                                e.exit();
                            }
                        } else {
                            BracketFenceStore.Entry e = store.enter(resource, presented);
                            try {
                                record.run();
                                // nested check of the same token: the holder checks again
                                store.fence(resource, presented, () -> null);
                            } finally {
                                e.exit();
                            }
                        }
                    } catch (TokenRejectedException | FenceStoreException expected) {
                        // refused: fine
                    } catch (Throwable e) {
                        throw new AssertionError(e);
                    }
                }
                return null;
            }));
        }
        futures.add(threads.submit(() -> {
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            while (!stop.get()) {
                store.compact(Duration.ZERO, 1 + rnd.nextInt(4), issuer);
            }
            return null;
        }));
        futures.add(threads.submit(() -> {
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            while (!stop.get()) {
                String r = RESOURCES[rnd.nextInt(RESOURCES.length)];
                try {
                    try {
                        reset.toHighestIssued(r, "under-load", rnd.nextInt(4) == 0);
                    } catch (dev.fencing.recovery.ResetRefusedException othersForgedToo) {
                        // other resources hold forged values too: the operator's way, an explicit value
                        reset.toValue(r, issuer.highestIssued(r), "under-load", true, rnd.nextBoolean());
                    }
                } catch (RuntimeException refusedOrNothingToLower) {
                    // refused, nothing to lower, changed meanwhile
                }
                Thread.yield();
            }
            return null;
        }));
        Thread.sleep(Long.getLong("retention.stress.millis", 8000));
        stop.set(true);
        for (Future<?> f : futures) {
            f.get(20, TimeUnit.SECONDS);
        }
        threads.shutdownNow();
        assertThat(acceptedCount.get()).isGreaterThan(100);
        List<String> violations = new ArrayList<>();
        accepted.forEach((r, list) -> {
            long max = 0;
            String holder = null;
            for (FencingToken t : list) {
                if (t.holder().startsWith("forged-")) {
                    continue; // the resets lower these, by design: only issued tokens must keep increasing
                }
                if (t.value() > max) {
                    max = t.value();
                    holder = t.holder();
                } else if (!(t.value() == max && t.holder().equals(holder))) {
                    violations.add(r + ": " + t + " accepted after " + max + "@" + holder);
                }
            }
        });
        assertThat(violations).isEmpty();
    }
}
