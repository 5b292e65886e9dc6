package dev.fencing.hazelcast;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A CP Subsystem reset ({@code CPSubsystemManagementService.reset()}) under a running issuer: the new CP group
 * starts its fences from small numbers. The held lease was reported lost and the reset resource's kept proxy failed,
 * but a resource the issuer had not locked before got fence 3 after this process had seen fence 19, without a word:
 * a paused holder of the old group (fence up to 19) could then write after the new holder. Fences are one sequence
 * for every lock of the group (as ZooKeeper's zxids and etcd's revisions, which were watched so), so the issuer now
 * refuses any fence not above the highest it has seen, names the reset, and its probe fails from then on.
 */
@Timeout(240)
class HazelcastCpResetTest {

    @Test
    void afterACpResetAFenceBelowOneSeenBeforeIsRefusedForEveryResource() throws Exception {
        try (CpGroup group = new CpGroup(3, 3)) {
            HazelcastTokenIssuer issuer = new HazelcastTokenIssuer(group.members.get(0), "reset/",
                    Duration.ofMillis(200), null);
            try {
                for (int i = 0; i < 5; i++) {
                    issuer.acquire("reset:old", Duration.ofSeconds(10)).close();
                }
                long before = issuer.highestIssued("reset:old");
                group.members.get(0).getCPSubsystem().getCPSubsystemManagementService().reset()
                        .toCompletableFuture().get(60, TimeUnit.SECONDS);
                String fresh = "reset:never-locked-before";
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                Throwable refused = null;
                while (refused == null) { // the new CP group may take a moment to form
                    try (Lease lease = issuer.acquire(fresh, Duration.ofSeconds(10))) {
                        throw new AssertionError("handed out " + lease.token() + " after fence " + before);
                    } catch (LockAcquisitionException e) {
                        if (String.valueOf(e.getMessage()).contains("went back")) {
                            refused = e;
                        } else if (System.nanoTime() > deadline) {
                            throw e;
                        } else {
                            Thread.sleep(500);
                        }
                    }
                }
                assertThat(refused).hasMessageContaining(fresh).hasMessageContaining("fence " + before)
                        .hasMessageContaining("reset");
                assertThat(issuer.isHeld(fresh)).as("the refused lock was given back").isFalse();
                assertThatThrownBy(issuer::probe).hasMessageContaining("went back");
            } finally {
                issuer.close();
            }
        }
    }
}
