package dev.fencing.hazelcast;

import dev.fencing.issuer.LockAcquisitionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * An acquire while the CP group has no majority: Hazelcast's calls (fetching a lock proxy asks the METADATA group,
 * {@code tryLockAndGetFence} the default group) wait for their invocation timeout, 60 to 120 s, whatever the
 * acquire's timeout. A trial's request with {@code fencing.acquire-timeout=10s} was answered 503 after 129 s, holding
 * a request thread all along. The issuer now waits at most the timeout and {@link HazelcastTokenIssuer#ANSWER_GRACE}
 * more, for a resource locked before (its proxy kept) and for a new one, and gives back a lock granted later.
 */
@Timeout(240)
class HazelcastNoMajorityAcquireTest {

    @Test
    void anAcquireWithoutMajorityFailsWithinItsTimeoutAndTheGrace() throws Exception {
        try (CpGroup group = new CpGroup(3, 3)) {
            HazelcastTokenIssuer issuer = new HazelcastTokenIssuer(group.members.get(0), "no-majority/",
                    Duration.ofMillis(200), null);
            try {
                issuer.acquire("no-majority:known", Duration.ofSeconds(10)).close();
                group.members.get(1).getLifecycleService().terminate();
                group.members.get(2).getLifecycleService().terminate();
                for (String resource : new String[] {"no-majority:known", "no-majority:new"}) {
                    assertTimeoutPreemptively(Duration.ofSeconds(30), () ->
                            assertThatThrownBy(() -> issuer.acquire(resource, Duration.ofSeconds(1)))
                                    .isInstanceOf(LockAcquisitionException.class)
                                    .hasMessageContaining(resource).hasMessageContaining("did not answer"),
                            resource + ": the acquire waited far beyond its timeout of 1 s");
                }
            } finally {
                issuer.close();
            }
        }
    }
}
