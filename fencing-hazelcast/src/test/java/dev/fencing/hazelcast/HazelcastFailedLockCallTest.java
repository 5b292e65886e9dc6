package dev.fencing.hazelcast;

import com.hazelcast.core.IndeterminateOperationStateException;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A {@code tryLockAndGetFence} that fails after the CP group committed the lock (Hazelcast's
 * {@code IndeterminateOperationStateException}, an operation timeout; here the seam throws one once the lock was
 * granted): the issuer left that lock held by the failed acquisition's id, which nothing released before this
 * member's CP session ended, so another member's acquire of the resource timed out (a red-team finding, S3). The
 * issuer now gives it back as that id, which no other acquisition ever uses.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class HazelcastFailedLockCallTest {

    private CpGroup group;
    private HazelcastTokenIssuer issuer;
    private HazelcastTokenIssuer other;

    @BeforeAll
    void start() {
        group = CpGroup.shared();
        issuer = new HazelcastTokenIssuer(group.members.get(0), "fencing-failed-call/", Duration.ofMillis(200), null);
        other = new HazelcastTokenIssuer(group.members.get(1), "fencing-failed-call/", Duration.ofMillis(200), null);
    }

    @AfterAll
    void stop() {
        issuer.close();
        other.close();
    }

    @Test
    void aLockCallThatFailsAfterTheGrantLeavesNoLockHeld() {
        String r = "failed-call-" + UUID.randomUUID();
        issuer.afterLockCall = resource -> {
            issuer.afterLockCall = ignored -> { };
            throw new IndeterminateOperationStateException("test: no answer after the CP group committed the lock");
        };
        assertThatThrownBy(() -> issuer.acquire(r, Duration.ofSeconds(5)))
                .isInstanceOf(LockAcquisitionException.class).hasMessageContaining(r)
                .hasMessageContaining("given back").hasRootCauseInstanceOf(IndeterminateOperationStateException.class);
        // the failed acquisition's lock, held until this member's CP session ends without the give-back
        try (Lease next = other.acquire(r, Duration.ofSeconds(10))) {
            assertThat(next.isLost()).isFalse();
        }
        try (Lease again = issuer.acquire(r, Duration.ofSeconds(10))) {
            assertThat(again.token().value()).as("the issuer still locks the resource").isPositive();
        }
    }

    @Test
    void theGiveBackNeverReleasesAnotherAcquisitionsLock() throws Exception {
        String r = "failed-call-other-" + UUID.randomUUID();
        issuer.afterLockCall = resource -> {
            issuer.afterLockCall = ignored -> { };
            throw new IndeterminateOperationStateException("test: no answer after the CP group committed the lock");
        };
        assertThatThrownBy(() -> issuer.acquire(r, Duration.ofSeconds(5))).isInstanceOf(LockAcquisitionException.class);
        // the next holder on the same member (same CP session): the give-back again, 3 s later, must not free it
        try (Lease next = issuer.acquire(r, Duration.ofSeconds(10))) {
            Thread.sleep(HazelcastTokenIssuer.GIVE_BACK_AGAIN.toMillis() + 1000);
            assertThat(issuer.isHeld(r)).isTrue();
            assertThat(next.isLost()).isFalse();
        }
    }
}
