package dev.fencing.hazelcast;

import dev.fencing.issuer.Lease;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A CP group of three of its own, which loses members: a member holding a lock crashes (its lease is reported lost,
 * the lock passes to the next holder with a larger fence once its CP session expires, locking and fences go on
 * with two of three); then a second member crashes, and the probe says the group has no majority.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(90)
class HazelcastMemberCrashTest {

    private CpGroup group;
    private HazelcastTokenIssuer survivor;
    private HazelcastTokenIssuer onCrashing;

    @BeforeAll
    void start() {
        group = new CpGroup(3, 3);
        survivor = new HazelcastTokenIssuer(group.members.get(0), "crash/", Duration.ofMillis(200), null);
        onCrashing = new HazelcastTokenIssuer(group.members.get(2), "crash/", Duration.ofMillis(200), null);
    }

    @AfterAll
    void stop() {
        survivor.close();
        onCrashing.close();
        group.close();
    }

    @Test
    @Order(1)
    void aCrashedHoldersLockPassesOnWithALargerFenceAndLockingGoesOn() throws Throwable {
        String r = "crash-" + UUID.randomUUID();
        InMemoryFenceStore store = new InMemoryFenceStore();
        Lease crashed = onCrashing.acquire(r, Duration.ofSeconds(10));
        store.fence(r, crashed.token(), () -> null);

        group.members.get(2).getLifecycleService().terminate();   // a crash: no goodbye, no unlock
        long crashedAt = System.nanoTime();
        try (Lease next = survivor.acquire(r, Duration.ofSeconds(30))) {
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - crashedAt);
            assertThat(next.token().value()).isGreaterThan(crashed.token().value());
            assertThat(waitedMs).as("granted once the crashed member's CP session expired")
                    .isGreaterThanOrEqualTo(TimeUnit.SECONDS.toMillis(CpGroup.SESSION_TTL_SECONDS) / 2);
            store.fence(r, next.token(), () -> null);
            assertThatThrownBy(() -> store.fence(r, crashed.token(), () -> null))
                    .isInstanceOf(StaleTokenException.class);
        }
        awaitLost(crashed);

        List<Long> fences = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            try (Lease lease = survivor.acquire("crash-after-" + i % 2, Duration.ofSeconds(10))) {
                fences.add(lease.token().value());
            }
        }
        assertThat(fences).as("fences keep growing, across resources too").isSorted().doesNotHaveDuplicates();
        assertThat(fences.get(0)).isGreaterThan(crashed.token().value());
        survivor.probe();
    }

    @Test
    @Order(2)
    void withoutAMajorityTheProbeFailsNamingTheGroupWithinSeconds() {
        group.members.get(1).getLifecycleService().terminate();
        long started = System.nanoTime();
        Throwable failure = catchThrowable(survivor::probe);
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertThat(failure).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("CP group 'default'").hasMessageContaining(group.clusterName)
                .hasMessageContaining("no majority");
        // within seconds, not the minutes Hazelcast's own invocation timeout would take; slack for a stalled VM
        assertThat(elapsedMs).isLessThan(HazelcastTokenIssuer.PROBE_WAIT.toMillis() + 10_000);
    }

    private static void awaitLost(Lease lease) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!lease.isLost()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(lease + " not reported lost within 20 s");
            }
            Thread.sleep(50);
        }
    }
}
