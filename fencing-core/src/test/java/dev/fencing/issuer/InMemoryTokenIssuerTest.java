package dev.fencing.issuer;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What only the in-memory issuer does (its start value, its clock); the behaviour every issuer shares is checked by
 * {@code TokenIssuerContract}, which fencing-test-support runs against this issuer
 * ({@code InMemoryTokenIssuerContractTest}).
 */
class InMemoryTokenIssuerTest {

    private final AtomicLong now = new AtomicLong();
    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer(Duration.ofSeconds(5), 32, now::get);

    @Test
    void tokensStartAfterTheGivenValueAndIncrease() {
        Lease first = issuer.acquire("r", Duration.ZERO);
        assertThat(first.token().value()).isEqualTo(33);
        first.close();
        Lease second = issuer.acquire("r", Duration.ZERO);
        assertThat(second.token().value()).isEqualTo(34);
        assertThat(second.token().holder()).isNotEqualTo(first.token().holder());
        assertThat(issuer.acquire("other", Duration.ZERO).token().value()).isEqualTo(33);
    }

    @Test
    void heldLockIsNotHandedOutUntilReleasedOrExpired() {
        Lease first = issuer.acquire("r", Duration.ZERO);
        assertThatThrownBy(() -> issuer.acquire("r", Duration.ZERO))
                .isInstanceOf(LockAcquisitionException.class)
                .hasMessageContaining("'r'")
                .hasMessageContaining(first.token().holder());
        now.addAndGet(Duration.ofSeconds(5).toNanos()); // the holder paused past its lease
        assertThat(first.isLost()).isTrue();
        Lease second = issuer.acquire("r", Duration.ZERO);
        assertThat(second.token().value()).isEqualTo(34);
        first.close(); // the zombie's release must not free the new holder's lock
        assertThat(second.isLost()).isFalse();
        assertThatThrownBy(() -> issuer.acquire("r", Duration.ZERO)).isInstanceOf(LockAcquisitionException.class);
    }

    @Test
    void waitingAcquirerGetsTheLockOnRelease() throws Exception {
        InMemoryTokenIssuer real = new InMemoryTokenIssuer(Duration.ofMinutes(1), 0);
        Lease first = real.acquire("r", Duration.ZERO);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Lease> waiting = pool.submit(() -> real.acquire("r", Duration.ofSeconds(30)));
            Thread.sleep(50);
            assertThat(waiting).isNotDone();
            first.close();
            assertThat(waiting.get(10, TimeUnit.SECONDS).token().value()).isEqualTo(2);
            assertThat(first.isReleased()).isTrue();
            assertThat(first.isLost()).as("a normal release is no loss").isFalse();
            assertThat(first.isHeld()).isFalse();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void concurrentAcquirersGetStrictlyIncreasingTokens() throws Exception {
        InMemoryTokenIssuer real = new InMemoryTokenIssuer(Duration.ofMinutes(1), 0);
        List<Long> seen = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> all = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                all.add(pool.submit(() -> {
                    for (int j = 0; j < 100; j++) {
                        Lease lease = real.acquire("r", Duration.ofSeconds(30));
                        seen.add(lease.token().value());
                        lease.close();
                    }
                    return null;
                }));
            }
            for (Future<?> f : all) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(seen).hasSize(400).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void badArgumentsAreNamed() {
        assertThatThrownBy(() -> issuer.acquire(" ", Duration.ZERO)).hasMessageContaining("resource");
        assertThatThrownBy(() -> issuer.acquire("r", Duration.ofSeconds(-1))).hasMessageContaining("'r'");
        assertThatThrownBy(() -> new InMemoryTokenIssuer(Duration.ZERO, 0)).hasMessageContaining("leaseTtl");
    }
}
