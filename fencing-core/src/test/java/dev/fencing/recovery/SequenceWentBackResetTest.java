package dev.fencing.recovery;

import dev.fencing.metrics.AdminMetrics;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A reset through a one-sequence issuer whose sequence went back (an ensemble that lost its data)
 * would lower max_seen below tokens the old sequence issued; other resources above the counter give it away.
 */
@Timeout(30)
class SequenceWentBackResetTest {

    @Test
    void aSequenceThatWentBackIsNotAReasonToLowerMaxSeen() throws Throwable {
        InMemoryFenceStore store = new InMemoryFenceStore();
        store.fence("accounts:1", new FencingToken("accounts:1", 1000, "old-a"), () -> null);
        store.fence("accounts:2", new FencingToken("accounts:2", 1005, "old-b"), () -> null);
        MaxSeenReset reset = new MaxSeenReset(store, new OneSequence(12), new AdminMetrics(new SimpleMeterRegistry()));

        assertThatThrownBy(() -> reset.toHighestIssued("accounts:1", "ops:mono", false))
                .isInstanceOf(ResetRefusedException.class).hasMessageContaining("went back")
                .hasMessageContaining("shared with an application on another lock service");
        assertThat(store.maxSeen("accounts:1")).hasValue(1000);
        // a zombie of the old sequence (token 990, issued before 1000 and never presented) stays out
        assertThatThrownBy(() -> store.fence("accounts:1", new FencingToken("accounts:1", 990, "zombie"), () -> null))
                .isInstanceOf(dev.fencing.rule.StaleTokenException.class);
    }

    @Test
    void aBadTokenOnOneResourceIsStillReset() throws Throwable {
        InMemoryFenceStore store = new InMemoryFenceStore();
        store.fence("accounts:1", new FencingToken("accounts:1", Long.MAX_VALUE, "forged"), () -> null);
        store.fence("accounts:2", new FencingToken("accounts:2", 900, "real"), () -> null);
        MaxSeenReset reset = new MaxSeenReset(store, new OneSequence(990), new AdminMetrics(new SimpleMeterRegistry()));

        assertThat(reset.toHighestIssued("accounts:1", "ops:mono", false).current()).isEqualTo(990);
    }
}
