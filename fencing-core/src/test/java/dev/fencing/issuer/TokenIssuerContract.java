package dev.fencing.issuer;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The behaviour every {@link TokenIssuer} must have, written once: strictly increasing tokens under concurrency,
 * independent resources, release and re-acquire, timeouts that return or throw in time. Extend it and implement
 * {@link #issuer()}.
 */
public abstract class TokenIssuerContract {

    /** The issuer under test; may return the same instance every time. */
    protected abstract TokenIssuer issuer();

    /** A resource name no other test uses. */
    protected String freshResource() {
        return "issuer-contract-" + UUID.randomUUID();
    }

    /** How long an acquire may overrun its timeout (scheduling, one round trip). */
    protected Duration slack() {
        return Duration.ofSeconds(3);
    }

    @Test
    void tokenNamesItsResourceAndIsPositive() {
        String r = freshResource();
        Lease lease = issuer().acquire(r, Duration.ofSeconds(10));
        try {
            assertThat(lease.token().resource()).isEqualTo(r);
            assertThat(lease.token().value()).isPositive();
            assertThat(lease.isLost()).isFalse();
        } finally {
            issuer().release(lease);
        }
    }

    @Test
    void strictlyIncreasingTokensForConcurrentAcquirers() throws Exception {
        String r = freshResource();
        int threads = 4;
        int each = 8;
        List<Long> inLockOrder = new ArrayList<>(); // appended while holding the lock: the list is in lock order
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            futures.add(pool.submit(() -> {
                start.await();
                for (int i = 0; i < each; i++) {
                    Lease lease = issuer().acquire(r, Duration.ofSeconds(30));
                    try {
                        synchronized (inLockOrder) {
                            inLockOrder.add(lease.token().value());
                        }
                    } finally {
                        issuer().release(lease);
                    }
                }
                return null;
            }));
        }
        start.countDown();
        try {
            for (Future<?> f : futures) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(inLockOrder).hasSize(threads * each).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void aHeldLockExcludesOthersUntilReleased() throws Exception {
        String r = freshResource();
        Lease first = issuer().acquire(r, Duration.ofSeconds(10));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Lease> second = pool.submit(() -> issuer().acquire(r, Duration.ofSeconds(30)));
            Thread.sleep(300);
            assertThat(second).isNotDone();
            issuer().release(first);
            Lease next = second.get(30, TimeUnit.SECONDS);
            assertThat(next.token().value()).isGreaterThan(first.token().value());
            assertThat(next.token().holder()).isNotEqualTo(first.token().holder());
            pool.submit(() -> issuer().release(next)).get(30, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void resourcesAreIndependent() {
        String a = freshResource();
        String b = freshResource();
        Lease onA = issuer().acquire(a, Duration.ofSeconds(10));
        try {
            Lease onB = issuer().acquire(b, Duration.ofSeconds(2));
            assertThat(onB.token().resource()).isEqualTo(b);
            issuer().release(onB);
        } finally {
            issuer().release(onA);
        }
    }

    @Test
    void releaseAndReacquireGivesALargerToken() {
        String r = freshResource();
        Lease first = issuer().acquire(r, Duration.ofSeconds(10));
        FencingToken firstToken = first.token();
        issuer().release(first);
        assertThat(first.isLost()).isTrue(); // released: no longer held
        issuer().release(first);             // releasing twice does nothing
        Lease second = issuer().acquire(r, Duration.ofSeconds(10));
        try {
            assertThat(second.token().value()).isGreaterThan(firstToken.value());
        } finally {
            issuer().release(second);
        }
    }

    @Test
    void acquireOnAHeldLockThrowsWithinItsTimeout() throws Exception {
        String r = freshResource();
        Lease held = issuer().acquire(r, Duration.ofSeconds(10));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Duration timeout = Duration.ofMillis(500);
            long started = System.nanoTime();
            Future<Throwable> attempt = pool.submit(() -> {
                try {
                    issuer().release(issuer().acquire(r, timeout));
                    return null;
                } catch (Throwable t) {
                    return t;
                }
            });
            Throwable failure = attempt.get(timeout.plus(slack()).toMillis() + 5_000, TimeUnit.MILLISECONDS);
            long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertThat(failure).isInstanceOf(LockAcquisitionException.class).hasMessageContaining(r);
            assertThat(((LockAcquisitionException) failure).resource()).isEqualTo(r);
            assertThat(elapsed).isGreaterThanOrEqualTo(timeout.toMillis() - 50)
                    .isLessThanOrEqualTo(timeout.plus(slack()).toMillis());
        } finally {
            pool.shutdownNow();
            issuer().release(held);
        }
    }

    @Test
    void badArgumentsAreRefusedWithTheirName() {
        assertThatThrownBy(() -> issuer().acquire(" ", Duration.ofSeconds(1))).hasMessageContaining("resource");
        assertThatThrownBy(() -> issuer().acquire(freshResource(), Duration.ofSeconds(-1)))
                .hasMessageContaining("timeout");
    }
}
