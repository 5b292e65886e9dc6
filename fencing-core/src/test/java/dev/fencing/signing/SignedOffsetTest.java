package dev.fencing.signing;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Signing over an offset issuer signs the shifted value; an offset over a signing issuer is refused. */
class SignedOffsetTest {

    private final Keys.Pair keys = Keys.Pair.of(SignatureScheme.HMAC_SHA256, "k1");

    @Test
    void theSignatureCoversTheShiftedToken() {
        TokenIssuer issuer = new SigningTokenIssuer(OffsetTokenIssuer.of(new InMemoryTokenIssuer(), 500),
                keys.signer());
        try (Lease lease = issuer.acquire("accounts:1", Duration.ofSeconds(1))) {
            assertThat(lease.token().value()).isEqualTo(501);
            assertThat(keys.verifier().verify(lease.token())).isEqualTo(Verification.VALID);
        }
    }

    @Test
    void offsettingASigningIssuerIsRefused() {
        TokenIssuer signing = new SigningTokenIssuer(new InMemoryTokenIssuer(), keys.signer());
        assertThatThrownBy(() -> OffsetTokenIssuer.of(signing, 500)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("offset first, then sign");
    }
}
