package dev.fencing.store;

import dev.fencing.recovery.ResetRefusedException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The in-memory store's admin calls used to take each resource's lock with no bound, so a fenced write paused inside
 * its call (a long GC, a stuck body) held a max_seen read, a floor raise or a reset, and the listings a reset and the
 * startup checks read (resources, highestMaxSeen), for as long. Now the listings never wait, and maxSeen, raiseFloor
 * and lowerMaxSeen wait at most the store's admin wait, then fail naming the resource and its holder, changing nothing.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AdminReadsDuringWriteTest {

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final CountDownLatch inside = new CountDownLatch(1);
    private final CountDownLatch resume = new CountDownLatch(1);

    @AfterEach
    void stop() {
        resume.countDown();
        threads.shutdownNow();
    }

    @Test
    void listingsDoNotWaitForAPausedWriteAndCountItsAdvance() throws Throwable {
        InMemoryFenceStore store = InMemoryFenceStore.builder().adminWait(Duration.ofMillis(200)).build();
        store.fence("orders:1", new FencingToken("orders:1", 5, "h5"), () -> null);
        Future<Object> paused = pause(store, new FencingToken("fresh", 7, "h7"));

        assertThat(inTime(() -> store.resources(null, 10))).containsExactly("fresh", "orders:1");
        assertThat(inTime(store::highestMaxSeen)).hasValue(7);

        resume.countDown();
        paused.get(5, TimeUnit.SECONDS);
        assertThat(store.maxSeen("fresh")).hasValue(7);
    }

    @Test
    void maxSeenWaitsForAPausedWriteAtMostTheAdminWaitThenFailsNamingItsHolder() throws Throwable {
        InMemoryFenceStore store = InMemoryFenceStore.builder().adminWait(Duration.ofMillis(300)).build();
        store.fence("orders:1", new FencingToken("orders:1", 5, "h5"), () -> null);
        Future<Object> paused = pause(store, new FencingToken("orders:1", 7, "h7"));

        long start = System.nanoTime();
        assertThatThrownBy(() -> inTime(() -> store.maxSeen("orders:1")))
                .isInstanceOf(FenceStoreException.class)
                .hasMessageContaining("InMemoryFenceStore.maxSeen('orders:1')")
                .hasMessageContaining("held by thread 'paused-writer'")
                .hasMessageContaining("admin wait of PT0.3S")
                .hasMessageContaining("nothing was read or changed");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));

        resume.countDown();
        paused.get(5, TimeUnit.SECONDS);
        assertThat(store.maxSeen("orders:1")).as("answered once the call is over").hasValue(7);
    }

    @Test
    void aResetOrAFloorRaiseDuringAPausedWriteFailsAndChangesNothing() throws Throwable {
        InMemoryFenceStore store = InMemoryFenceStore.builder().adminWait(Duration.ofMillis(200)).build();
        store.fence("orders:1", new FencingToken("orders:1", 5, "h5"), () -> null);
        Future<Object> paused = pause(store, new FencingToken("orders:1", 7, "h7"));

        assertThatThrownBy(() -> inTime(() -> store.lowerMaxSeen("orders:1", 0)))
                .isInstanceOf(ResetRefusedException.class)
                .hasMessageContaining("InMemoryFenceStore.lowerMaxSeen('orders:1', 0)");
        assertThatThrownBy(() -> inTime(() -> store.lowerMaxSeen("orders:1", 3, 7)))
                .isInstanceOf(ResetRefusedException.class);
        assertThatThrownBy(() -> inTime(() -> {
            store.raiseFloor("orders:1", 100);
            return null;
        })).isInstanceOf(FenceStoreException.class)
                .hasMessageContaining("InMemoryFenceStore.raiseFloor('orders:1', 100)");

        resume.countDown();
        paused.get(5, TimeUnit.SECONDS);
        assertThat(store.maxSeen("orders:1")).as("neither the reset nor the raise happened").hasValue(7);
        store.fence("orders:1", new FencingToken("orders:1", 8, "h8"), () -> null);
        assertThat(store.lowerMaxSeen("orders:1", 3, 8)).as("outside any call, the reset runs").isEqualTo(8);
        assertThat(store.maxSeen("orders:1")).hasValue(3);
    }

    @Test
    void anAdminCallQueuedBehindAShortWriteAnswersOnceItIsOver() throws Exception {
        InMemoryFenceStore store = InMemoryFenceStore.builder().adminWait(Duration.ofSeconds(10)).build();
        Future<Object> paused = pause(store, new FencingToken("orders:1", 7, "h7"));
        Future<?> read = threads.submit(() -> store.maxSeen("orders:1"));
        Thread.sleep(50);
        assertThat(read).as("the read waits for the write in progress").isNotDone();
        resume.countDown();
        assertThat(read.get(5, TimeUnit.SECONDS)).isEqualTo(OptionalLong.of(7));
        paused.get(5, TimeUnit.SECONDS);
    }

    @Test
    void theAdminWaitMustBePositive() {
        assertThatThrownBy(() -> InMemoryFenceStore.builder().adminWait(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("adminWait must be positive and at most a day, was PT0S");
        assertThatThrownBy(() -> InMemoryFenceStore.builder().adminWait(Duration.ofDays(400 * 365)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("was PT3504000H");
        assertThatThrownBy(() -> InMemoryFenceStore.builder().adminWait(null))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /** A fenced write on another thread, named paused-writer, held inside its body until {@link #resume}. */
    private Future<Object> pause(InMemoryFenceStore store, FencingToken token) throws InterruptedException {
        Future<Object> call = threads.submit(() -> {
            Thread.currentThread().setName("paused-writer");
            try {
                return store.fence(token.resource(), token, () -> {
                    inside.countDown();
                    return resume.await(20, TimeUnit.SECONDS);
                });
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
        });
        assertThat(inside.await(5, TimeUnit.SECONDS)).isTrue();
        return call;
    }

    /** Runs an admin call on another thread; fails, instead of hanging, when it waits for good. */
    private <T> T inTime(Callable<T> call) throws Exception {
        Future<T> result = threads.submit(call);
        try {
            return result.get(5, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("the admin call waited for the fenced call in progress", e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }
}
