package dev.fencing.hazelcast;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.hazelcast.core.HazelcastInstance;
import dev.fencing.FencingConfigurationException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The issuer on a Hazelcast client of a cluster whose CP Subsystem runs in unsafe mode (cp-member-count 0): a member
 * is refused at construction, but a client cannot read the members' configuration, and it issued fences without a
 * word (a red-team review). A client can tell all the same: in unsafe mode a lock's CP group is its partition's,
 * named after the lock, not {@code default}. Refused at the probe and at the first acquire of each lock.
 */
class UnsafeModeClientTest {

    @Test
    @Timeout(90)
    void aClientOfAnUnsafeModeClusterIsRefusedAtTheProbeAndAtTheAcquire() {
        try (CpGroup unsafe = new CpGroup(2, 0)) {
            HazelcastInstance client = unsafe.client();
            HazelcastTokenIssuer issuer = new HazelcastTokenIssuer(client, "unsafe/", Duration.ofSeconds(1), null);
            try {
                assertThatThrownBy(issuer::probe).hasRootCauseInstanceOf(FencingConfigurationException.class)
                        .rootCause().hasMessageContaining("unsafe mode").hasMessageContaining("not 'default'");
                assertThatThrownBy(() -> issuer.acquire("accounts", Duration.ofSeconds(10)))
                        .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("cp-member-count");
                assertThat(client.getCPSubsystem().getLock("unsafe/accounts").isLocked()).isFalse();
            } finally {
                issuer.close();
            }
        }
    }
}
