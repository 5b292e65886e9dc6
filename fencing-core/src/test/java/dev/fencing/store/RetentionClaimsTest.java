package dev.fencing.store;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The availability and safety claims stores.md makes of the in-memory store's retention, one test each. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RetentionClaimsTest {

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);

    private static FencingToken token(String resource, long value) {
        return new FencingToken(resource, value, "h" + value);
    }

    @Test
    void aTokenIssuedBeforeTheBoundsFoldIsStillAcceptedByTheResourceThatCausedIt() throws Throwable {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxResources(2, issuer).build();
        for (String r : new String[] {"f:1", "f:1", "f:1", "f:1", "f:2"}) {
            try (Lease lease = issuer.acquire(r, Duration.ofSeconds(1))) {
                store.fence(r, lease.token(), () -> null);
            }
        }
        // f:3's token is issued from the floor as it is (none): 1, far below f:1's 4
        try (Lease lease = issuer.acquire("f:3", Duration.ofSeconds(1))) {
            assertThat(lease.token().value()).isEqualTo(1);
            assertThatCode(() -> store.fence("f:3", lease.token(), () -> null)).doesNotThrowAnyException();
        }
        assertThat(store.size()).isLessThanOrEqualTo(2);
        assertThat(store.familyFloor("f")).hasValue(4);
        // and every folded token stays refused
        for (long v = 1; v <= 4; v++) {
            long value = v;
            assertThatThrownBy(() -> store.fence("f:1", token("f:1", value), () -> null))
                    .isInstanceOf(TokenRejectedException.class);
        }
    }

    @Test
    void theHolderOfASlotInUseKeepsWritingThroughCompactionAndTheBound() throws Throwable {
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxResources(4, IssuerFloors.ONE_SEQUENCE)
                .nanoClock(clock::get).build();
        FencingToken busy = token("f:busy", 10);
        store.fence("f:busy", busy, () -> null);
        long hour = TimeUnit.HOURS.toNanos(1);
        for (int i = 0; i < 6; i++) {
            clock.addAndGet(hour / 2);
            store.fence("f:busy", busy, () -> null); // the same lease writes every half hour
            store.compact(Duration.ofHours(1), 10, IssuerFloors.ONE_SEQUENCE);
            assertThatCode(() -> store.fence("f:busy", busy, () -> null)).as("round " + i).doesNotThrowAnyException();
        }
        // the bound: fresh resources keep coming, f:busy's holder keeps writing
        for (int i = 0; i < 20; i++) {
            store.fence("f:" + i, token("f:" + i, 100 + i), () -> null);
            assertThatCode(() -> store.fence("f:busy", busy, () -> null)).as("new " + i).doesNotThrowAnyException();
        }
    }

    @Test
    void loweringAFoldedResourceInAFullStoreFailsClosedWithoutAnNpe() throws Throwable {
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxResources(2, IssuerFloors.ONE_SEQUENCE).build();
        store.fence("f:1", token("f:1", 50), () -> null);
        store.compact(Duration.ZERO, 10, IssuerFloors.ONE_SEQUENCE);
        store.fence("x", token("x", 1), () -> null);
        store.fence("y", token("y", 1), () -> null); // full of resources without a family
        assertThatThrownBy(() -> store.lowerMaxSeen("f:1", 20)).isInstanceOf(FenceStoreException.class)
                .hasMessageContaining("f:1");
        assertThat(store.maxSeen("f:1")).hasValue(50);
        assertThatThrownBy(() -> store.fence("f:1", token("f:1", 30), () -> null)).isInstanceOf(RuntimeException.class);
    }

    @Test
    void aHeldSlotKeepsItsWriterAloneWhileCompactionAndTheBoundRunBesideIt() throws Throwable {
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxResources(2, IssuerFloors.ONE_SEQUENCE).build();
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<?> writer = pool.submit(() -> {
                try {
                    return store.fence("f:held", token("f:held", 5), () -> {
                        inside.countDown();
                        release.await();
                        return null;
                    });
                } catch (Throwable e) {
                    throw new AssertionError(e);
                }
            });
            inside.await();
            store.compact(Duration.ZERO, 10, IssuerFloors.ONE_SEQUENCE);
            store.fence("f:a", token("f:a", 100), () -> null);
            store.fence("f:b", token("f:b", 200), () -> null); // the bound folds f:a, never the held f:held
            store.compact(Duration.ZERO, 10, IssuerFloors.ONE_SEQUENCE);
            // a second writer with a newer token must wait for the held slot, not run beside it on a new one
            Future<Boolean> second;
            ExecutorService other = Executors.newSingleThreadExecutor();
            try {
                second = other.submit(() -> {
                    try {
                        store.fence("f:held", token("f:held", 6), () -> null);
                        return true;
                    } catch (Throwable e) {
                        throw new AssertionError(e);
                    }
                });
                Thread.sleep(100);
                assertThat(second.isDone()).as("ran beside the held slot").isFalse();
                release.countDown();
                writer.get(5, TimeUnit.SECONDS);
                assertThat(second.get(5, TimeUnit.SECONDS)).isTrue();
            } finally {
                other.shutdownNow();
            }
        } finally {
            release.countDown();
            pool.shutdownNow();
        }
        assertThatThrownBy(() -> store.fence("f:held", token("f:held", 5), () -> null))
                .isInstanceOf(TokenRejectedException.class);
    }
}
