package dev.fencing.signing;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The decorator signs each lease's token and leaves locking and release to the issuer it decorates. */
class SigningTokenIssuerTest {

    private final Keys.Pair keys = Keys.Pair.of(SignatureScheme.ED25519, "k1");

    @Test
    void leasesCarrySignedTokensAndReleaseTheDecoratedLock() {
        InMemoryTokenIssuer plain = new InMemoryTokenIssuer();
        TokenIssuer issuer = new SigningTokenIssuer(plain, keys.signer());
        FencingToken first;
        try (Lease lease = issuer.acquire("accounts:1", Duration.ofSeconds(1))) {
            first = lease.token();
            assertThat(first.isSigned()).isTrue();
            assertThat(first.signature().keyId()).isEqualTo("k1");
            assertThat(keys.verifier().verify(first)).isEqualTo(Verification.VALID);
            assertThat(lease.isHeld()).isTrue();
            // the lock is the decorated issuer's: it is held
            assertThatThrownBy(() -> plain.acquire("accounts:1", Duration.ZERO))
                    .isInstanceOf(LockAcquisitionException.class);
        }
        try (Lease next = issuer.acquire("accounts:1", Duration.ofSeconds(1))) {
            assertThat(next.token().value()).isGreaterThan(first.value());
            assertThat(keys.verifier().verify(next.token())).isEqualTo(Verification.VALID);
        }
    }

    @Test
    void aSigningFailureReleasesTheLock() {
        InMemoryTokenIssuer plain = new InMemoryTokenIssuer();
        TokenIssuer failing = new SigningTokenIssuer((resource, timeout) -> {
            Lease lease = plain.acquire(resource, timeout);
            return Lease.presenting(lease, null); // a token the signer cannot take
        }, keys.signer());
        assertThatThrownBy(() -> failing.acquire("r", Duration.ofSeconds(1)))
                .isInstanceOf(LockAcquisitionException.class).hasMessageContaining("'r'")
                .hasMessageContaining("released");
        try (Lease again = plain.acquire("r", Duration.ZERO)) {
            assertThat(again.isHeld()).isTrue();
        }
    }
}
