package dev.fencing.hazelcast;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Hazelcast's {@code tryLockAndGetFence} ignores interrupts: an acquire whose caller gave up (a reactive subscriber
 * that cancelled interrupts the waiting thread) went on waiting for its whole timeout, and took the lock when it was
 * freed meanwhile. The acquire now ends on the interrupt, and a lock the CP group grants afterwards (its wait goes on
 * in the CP group) is given back.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class HazelcastInterruptedAcquireTest {

    private CpGroup group;
    private HazelcastTokenIssuer issuer;
    private HazelcastTokenIssuer other;

    @BeforeAll
    void start() {
        group = CpGroup.shared();
        issuer = new HazelcastTokenIssuer(group.members.get(0), "fencing-interrupt/", Duration.ofMillis(200), null);
        other = new HazelcastTokenIssuer(group.members.get(1), "fencing-interrupt/", Duration.ofMillis(200), null);
    }

    @AfterAll
    void stop() {
        issuer.close();
        other.close();
    }

    @Test
    void anInterruptEndsTheWaitAndALockGrantedAfterItIsGivenBack() throws Exception {
        String r = "interrupted-" + UUID.randomUUID();
        Lease held = issuer.acquire(r, Duration.ofSeconds(10));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            CountDownLatch started = new CountDownLatch(1);
            AtomicReference<Thread> waiter = new AtomicReference<>();
            Future<Object[]> attempt = pool.submit(() -> {
                waiter.set(Thread.currentThread());
                started.countDown();
                Throwable failure = catchThrowable(() -> issuer.acquire(r, Duration.ofSeconds(60)).close());
                return new Object[] {failure, Thread.interrupted()};
            });
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            Thread.sleep(500); // most likely waiting in the CP group by now; an earlier interrupt ends it the same way
            waiter.get().interrupt();
            Object[] outcome = attempt.get(15, TimeUnit.SECONDS); // not the acquire's 60 s
            assertThat((Throwable) outcome[0]).isInstanceOf(LockAcquisitionException.class)
                    .hasMessageContaining("Interrupted").hasMessageContaining(r);
            assertThat((Boolean) outcome[1]).as("the interrupt is kept").isTrue();
        } finally {
            pool.shutdownNow();
            held.close(); // the interrupted acquisition's wait in the CP group may now be granted: it is given back
        }
        try (Lease next = other.acquire(r, Duration.ofSeconds(10))) {
            assertThat(next.isLost()).isFalse();
        }
    }
}
