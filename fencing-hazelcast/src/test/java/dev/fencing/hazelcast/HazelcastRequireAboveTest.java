package dev.fencing.hazelcast;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code IssuedTokens.requireAbove}: the Spring Boot starter's startup check, when it cannot read the CP group's
 * current fence (no majority yet, the cluster not formed) but the fence store holds a max_seen, tells the issuer to
 * refuse any fence at or below it, and logs that it does so. The Hazelcast issuer inherited the default, which does
 * nothing: a CP group that came back from a whole-cluster restart (fences from small numbers again) then handed out
 * fences below the store's max_seen without a word, for a resource nobody had written yet too, where a paused holder
 * of the old group could still write after the new holder (as ZooKeeper's and etcd's issuers refuse).
 */
@Timeout(180)
class HazelcastRequireAboveTest {

    @Test
    void aFenceAtOrBelowTheRequiredBoundIsRefused() throws Exception {
        CpGroup group = CpGroup.shared();
        HazelcastTokenIssuer issuer = new HazelcastTokenIssuer(group.members.get(0), "require-above/",
                Duration.ofMillis(200), null);
        try {
            long bound = issuer.highestIssued("require-above:x") + 1_000_000;
            issuer.requireAbove(bound, "the fence store's highest max_seen, read at startup");
            assertThatThrownBy(() -> {
                try (Lease lease = issuer.acquire("require-above:never-written", Duration.ofSeconds(10))) {
                    throw new AssertionError("handed out " + lease.token() + " at or below " + bound);
                }
            }).isInstanceOf(LockAcquisitionException.class).hasMessageContaining("require-above:never-written")
                    .hasMessageContaining(String.valueOf(bound));
            assertThat(issuer.isHeld("require-above:never-written")).as("the refused lock was given back").isFalse();
            assertThatThrownBy(issuer::probe).hasMessageContaining(String.valueOf(bound));
        } finally {
            issuer.close();
        }
    }
}
