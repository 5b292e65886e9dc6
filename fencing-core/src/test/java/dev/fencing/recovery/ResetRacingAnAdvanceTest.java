package dev.fencing.recovery;

import dev.fencing.metrics.AdminMetrics;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;


import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The reset read the issuer's highest token, then lowered max_seen to it: a token issued after that read and accepted
 * before the lowering was undone by it, and a zombie's token between the two was accepted again, after the newer one
 * (a red-team review). The reset now lowers only while max_seen is what it read before it asked the issuer.
 */
@Timeout(30)
class ResetRacingAnAdvanceTest {

    private static final String R = "accounts:3";

    @Test
    void aTokenAcceptedWhileTheResetRunsIsNotUndoneAndItsPredecessorsStayOut() throws Throwable {
        InMemoryFenceStore store = new InMemoryFenceStore();
        OneSequence issuer = new OneSequence(0);
        MaxSeenReset reset = new MaxSeenReset(store, issuer, new AdminMetrics(new SimpleMeterRegistry()));

        // a token from an old ensemble, a little ahead of the new one's sequence, locked the resource out
        store.fence(R, new FencingToken(R, 1000, "old-ensemble"), () -> null);
        issuer.zxid.set(990);

        FencingToken[] zombie = new FencingToken[1];
        issuer.afterRead = () -> {
            // meanwhile the sequence passes 1000: holder Z takes the lock (1001) and pauses, its lease expires,
            // holder H takes it (1002) and writes, which the fence accepts: the resource came back on its own
            zombie[0] = new FencingToken(R, issuer.zxid.addAndGet(11), "z");
            FencingToken h = new FencingToken(R, issuer.zxid.incrementAndGet(), "h");
            try {
                store.fence(R, h, () -> "h wrote");
            } catch (Throwable e) {
                throw new AssertionError(e);
            }
        };

        assertThatThrownBy(() -> reset.toHighestIssued(R, "ops:alice", false))
                .isInstanceOf(ResetRefusedException.class).hasMessageContaining("moved from 1000 to 1002");
        assertThat(store.maxSeen(R)).hasValue(1002);

        // Z, the zombie, must not write after H: its token 1001 is below H's accepted 1002
        assertThatThrownBy(() -> store.fence(R, zombie[0], () -> "zombie wrote"))
                .as("zombie token %s after the holder's 1002 was accepted; max_seen now %s", zombie[0],
                        store.maxSeen(R))
                .isInstanceOf(StaleTokenException.class);
    }
}
