package dev.fencing.docs.signing;

import dev.fencing.guard.FenceGuard;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.signing.KeyMaterial;
import dev.fencing.signing.KeyRing;
import dev.fencing.signing.SigningTokenIssuer;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.Verification;
import dev.fencing.signing.VerificationKey;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;

import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.time.Duration;
import java.util.Base64;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The examples of docs/signing.md, run: an Ed25519 issuer and resource, and an HMAC key rotation. */
class SigningExampleTest {

    @Test
    void ed25519IssuerAndResource() throws Exception {
        KeyPair pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        String privatePem = pem("PRIVATE KEY", pair.getPrivate().getEncoded());
        String publicPem = pem("PUBLIC KEY", pair.getPublic().getEncoded());
        TokenIssuer lockService = new InMemoryTokenIssuer();
        InMemoryFenceStore store = new InMemoryFenceStore();

        // tag::issuer-side[]
        TokenSigner signer = TokenSigner.ed25519("2026-11", KeyMaterial.ed25519PrivateKey("2026-11", privatePem));
        TokenIssuer issuer = new SigningTokenIssuer(lockService, signer);   // any TokenIssuer
        // end::issuer-side[]

        // tag::resource-side[]
        KeyRing ring = KeyRing.of(VerificationKey.ed25519("2026-11",
                KeyMaterial.ed25519PublicKey("2026-11", publicPem)));
        TokenVerifier verifier = new TokenVerifier(ring);                   // public keys only: cannot sign
        FenceGuard guard = FenceGuard.builder(store).verifier(verifier).build();
        // end::resource-side[]

        try (Lease lease = issuer.acquire("accounts:3", Duration.ofSeconds(1))) {
            assertThat(lease.token().toText()).startsWith("accounts:3#1@").contains("!2026-11.");
            assertThat(verifier.verify(FencingToken.parse(lease.token().toText()))).isEqualTo(Verification.VALID);
        }
        FencingToken forged = new FencingToken("accounts:3", Long.MAX_VALUE, "evil");
        assertThatThrownBy(() -> verifier.requireValid(forged, "accounts:3", "PUT /accounts/3"))
                .isInstanceOf(ForgedTokenException.class).hasMessageContaining("unsigned");
        assertThat(guard).isNotNull();
    }

    @Test
    void hmacRotation() {
        byte[] oldSecret = KeyMaterial.hmacSecret("k1", Base64.getEncoder().encodeToString(new byte[]{
                1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
                29, 30, 31, 32}));
        byte[] newSecret = new byte[32];
        newSecret[0] = 42;
        FencingToken oldToken = TokenSigner.hmac("k1", oldSecret).sign(new FencingToken("ledger", 7, "a"));
        FencingToken newToken = TokenSigner.hmac("k2", newSecret).sign(new FencingToken("ledger", 8, "b"));

        // tag::rotation[]
        KeyRing before = KeyRing.of(VerificationKey.hmac("k1", oldSecret));
        KeyRing overlap = before.with(VerificationKey.hmac("k2", newSecret)); // step 1: every resource
        TokenSigner next = TokenSigner.hmac("k2", newSecret);                  // step 2: the issuers
        KeyRing after = overlap.retire("k1");                                  // step 3: every resource
        // end::rotation[]

        assertThat(new TokenVerifier(before).verify(newToken)).isEqualTo(Verification.UNKNOWN_KEY);
        assertThat(new TokenVerifier(overlap).verify(oldToken)).isEqualTo(Verification.VALID);
        assertThat(new TokenVerifier(overlap).verify(next.sign(newToken))).isEqualTo(Verification.VALID);
        assertThat(new TokenVerifier(after).verify(oldToken)).isEqualTo(Verification.RETIRED_KEY);
        assertThat(new TokenVerifier(after).verify(newToken)).isEqualTo(Verification.VALID);
    }

    private static String pem(String label, byte[] der) {
        return "-----BEGIN " + label + "-----\n" + Base64.getMimeEncoder().encodeToString(der) + "\n-----END " + label
                + "-----\n";
    }
}
