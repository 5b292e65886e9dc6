package dev.fencing.store;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * lowerMaxSeen(resource, 0) forgets the resource (its slot is marked retired and leaves the map). Called by a thread
 * that holds the resource's slot (from inside a fenced write on that resource: the lock is reentrant, so it does not
 * wait), it retired a slot still held, and another thread then made a new slot and ran its write beside the first.
 * Now a reset from inside the resource's own fenced call is refused and changes nothing.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class ForgetWhileHeldTest {

    @Test
    void forgettingTheResourceFromInsideItsFencedWriteKeepsTheWriteExclusive() throws Throwable {
        InMemoryFenceStore store = new InMemoryFenceStore();
        CountDownLatch forgotten = new CountDownLatch(1);
        CountDownLatch firstDone = new CountDownLatch(1);
        AtomicBoolean firstInside = new AtomicBoolean();
        AtomicBoolean overlapped = new AtomicBoolean();
        Thread second = new Thread(() -> {
            try {
                forgotten.await();
                store.fence("orders", new FencingToken("orders", 9, "h9"), () -> {
                    overlapped.set(firstInside.get());
                    return null;
                });
            } catch (Throwable ignored) {
                // rejected or interrupted: no overlap
            }
        });
        second.setDaemon(true);
        second.start();
        store.fence("orders", new FencingToken("orders", 5, "h5"), () -> {
            firstInside.set(true);
            // an admin reset run from inside the write: refused, forgetting or lowering
            assertThatThrownBy(() -> store.lowerMaxSeen("orders", 0)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("lowerMaxSeen('orders', 0) was called inside a fenced call on 'orders'");
            assertThatThrownBy(() -> store.lowerMaxSeen("orders", 3, 5)).isInstanceOf(IllegalStateException.class);
            assertThat(store.maxSeen("orders")).hasValue(5);
            forgotten.countDown();
            second.join(500); // the second write should wait for this one's exit
            firstInside.set(false);
            return null;
        });
        second.join(5_000);
        assertThat(overlapped).as("the second write ran while the first still held the resource").isFalse();
        assertThat(store.maxSeen("orders")).as("the second write ran after the first").hasValue(9);
        assertThat(store.lowerMaxSeen("orders", 0)).as("outside the fenced call, the reset runs").isEqualTo(9);
    }
}
