package dev.fencing.recovery;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * After compaction, a resource of a compacted family whose own counter is below the family's floor gets a slot (or
 * row) at that floor as soon as any check reaches it (a zombie's token, refused). Its max_seen is then above the
 * issuer's counter for it, though nothing went back: the issuer issues it {@code max(counter, floor) + 1}. The reset's
 * check that the issuer's counters did not go back took that for evidence and refused every reset of the store.
 */
@Timeout(30)
class ResetBesideCompactedFamilyTest {

    private static FencingToken acquireAndWrite(InMemoryTokenIssuer issuer, InMemoryFenceStore store, String resource)
            throws Throwable {
        try (Lease lease = issuer.acquire(resource, Duration.ofSeconds(1))) {
            store.fence(resource, lease.token(), () -> null);
            return lease.token();
        }
    }

    @Test
    void aRefusedZombieInACompactedFamilyDoesNotBlockTheResetOfAForgedToken() throws Throwable {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        InMemoryFenceStore store = new InMemoryFenceStore();
        FencingToken zombie = acquireAndWrite(issuer, store, "acct:1"); // token 1
        for (int i = 0; i < 3; i++) {
            acquireAndWrite(issuer, store, "acct:2"); // tokens 1, 2, 3
        }
        store.compact(Duration.ZERO, 100, issuer); // floor of acct: 3, told to the issuer
        // a paused holder of acct:1's token 1 comes back: refused, as it must be
        assertThatThrownBy(() -> store.fence("acct:1", zombie, () -> null)).isInstanceOf(TokenRejectedException.class);
        assertThat(issuer.highestIssued("acct:1")).isEqualTo(1);
        assertThat(store.maxSeen("acct:1")).hasValue(3);

        // a forged token on another resource: the textbook case for the reset
        acquireAndWrite(issuer, store, "orders");
        store.fence("orders", new FencingToken("orders", Long.MAX_VALUE, "evil"), () -> null);
        MaxSeenReset reset = new MaxSeenReset(store, issuer, new AdminMetrics(new SimpleMeterRegistry()));

        assertThat(reset.toHighestIssued("orders", "ops:alice", false).current()).isEqualTo(1);
        // and acct:1's next real token writes
        acquireAndWrite(issuer, store, "acct:1");
    }

    @Test
    void anIssuerWhoseCountersAndFloorsWentBackIsStillCaughtInACompactedFamily() throws Throwable {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        InMemoryFenceStore store = new InMemoryFenceStore();
        acquireAndWrite(issuer, store, "acct:1");
        for (int i = 0; i < 3; i++) {
            acquireAndWrite(issuer, store, "acct:2");
        }
        store.compact(Duration.ZERO, 100, issuer);
        assertThatThrownBy(() -> store.fence("acct:1", new FencingToken("acct:1", 1, "zombie"), () -> null))
                .isInstanceOf(TokenRejectedException.class);
        // the issuer's state went back (a fresh one, as after a lease table recreated): acct:1 counted once, no floor
        InMemoryTokenIssuer fresh = new InMemoryTokenIssuer();
        try (Lease lease = fresh.acquire("acct:1", Duration.ofSeconds(1))) {
            assertThat(lease.token().value()).isEqualTo(1);
        }
        try (Lease lease = fresh.acquire("orders", Duration.ofSeconds(1))) {
            store.fence("orders", lease.token(), () -> null);
        }
        store.fence("orders", new FencingToken("orders", Long.MAX_VALUE, "evil"), () -> null);
        MaxSeenReset reset = new MaxSeenReset(store, fresh, new AdminMetrics(new SimpleMeterRegistry()));

        assertThatThrownBy(() -> reset.toHighestIssued("orders", "ops:alice", false))
                .isInstanceOf(ResetRefusedException.class).hasMessageContaining("went back");
    }
}
