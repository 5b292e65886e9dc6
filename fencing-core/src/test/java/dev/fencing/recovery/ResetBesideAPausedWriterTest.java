package dev.fencing.recovery;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * A reset of one resource of the in-memory store reads other resources' max_seen (the check that the issuer's
 * counters did not go back, up to 100 of them): each read took that resource's slot lock, so the reset waited, without
 * any bound, for every fenced call in progress on those other resources: one paused writer anywhere hung it. The JDBC
 * store reads committed values and waits for nobody else's row (operations.md: a reset waits for a fenced transaction
 * that holds its own row, at most lockTimeout).
 */
@Timeout(30)
class ResetBesideAPausedWriterTest {

    @Test
    void aResetDoesNotWaitForAWriterPausedOnAnotherResource() throws Throwable {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        InMemoryFenceStore store = new InMemoryFenceStore();
        try (Lease lease = issuer.acquire("orders", Duration.ofSeconds(1))) {
            store.fence("orders", lease.token(), () -> null);
        }
        store.fence("orders", new FencingToken("orders", Long.MAX_VALUE, "evil"), () -> null);
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<?> paused = pool.submit(() -> {
                try (Lease lease = issuer.acquire("acct:2", Duration.ofSeconds(1))) {
                    return store.fence("acct:2", lease.token(), () -> {
                        inside.countDown();
                        return release.await(20, TimeUnit.SECONDS); // a GC pause, a slow remote call
                    });
                } catch (Throwable e) {
                    throw new AssertionError(e);
                }
            });
            assertThat(inside.await(5, TimeUnit.SECONDS)).isTrue();
            MaxSeenReset reset = new MaxSeenReset(store, issuer, new AdminMetrics(new SimpleMeterRegistry()));
            ResetResult result = assertTimeoutPreemptively(Duration.ofSeconds(3),
                    () -> reset.toHighestIssued("orders", "ops:alice", false));
            assertThat(result.current()).isEqualTo(1);
            release.countDown();
            paused.get(5, TimeUnit.SECONDS);
        } finally {
            release.countDown();
            pool.shutdownNow();
        }
    }
}
