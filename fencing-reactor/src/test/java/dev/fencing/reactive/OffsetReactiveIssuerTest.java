package dev.fencing.reactive;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.OffsetTokenIssuer;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The offset issuer through the reactive adapter: the shifted token, and the lock released through the lease. */
class OffsetReactiveIssuerTest {

    @Test
    void theAdapterHandsOutTheShiftedTokenAndReleasesTheDecoratedLock() {
        InMemoryTokenIssuer b = new InMemoryTokenIssuer();
        ReactiveTokenIssuer reactive = ReactiveTokenIssuer.fromBlocking(OffsetTokenIssuer.of(b, 10_000));
        Lease lease = reactive.acquire("ledger", Duration.ofSeconds(1)).block(Duration.ofSeconds(10));
        assertThat(lease).isNotNull();
        assertThat(lease.token().value()).isEqualTo(10_001);
        assertThat(b.isHeld("ledger")).isTrue();
        lease.close();
        assertThat(b.isHeld("ledger")).isFalse();
    }
}
