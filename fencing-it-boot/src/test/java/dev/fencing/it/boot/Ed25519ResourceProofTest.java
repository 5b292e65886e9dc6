package dev.fencing.it.boot;

import dev.fencing.issuer.TokenIssuer;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.springframework.http.ResponseEntity;

import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.GeneralSecurityException;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A resource that must not be able to mint tokens, over real HTTP on PostgreSQL: configured with the Ed25519
 * public key only, it starts, verifies the issuer's tokens, refuses forged ones, and has no signer (there is no
 * private key to build one from).
 */
class Ed25519ResourceProofTest extends AbstractSigningProofTest {

    private KeyPair issuerKeys;

    @Override
    List<String> properties() throws GeneralSecurityException {
        issuerKeys = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        String publicKey = "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder().encodeToString(issuerKeys.getPublic().getEncoded())
                + "\n-----END PUBLIC KEY-----\n";
        return List.of(
                "fencing.issuer.type=none",       // a resource only: it checks, it takes no lock
                "proof.acquiring=false",
                "fencing.signing.scheme=ed25519",
                "fencing.signing.current-key-id=ed1",
                "fencing.signing.keys.ed1.public-key=" + publicKey);
    }

    @Test
    void theResourceHasAVerifierAndNothingThatSigns() {
        assertThat(context.getBeansOfType(TokenVerifier.class)).hasSize(1);
        assertThat(context.getBeansOfType(TokenSigner.class)).as("no private key, no signer").isEmpty();
        assertThat(context.getBeansOfType(TokenIssuer.class)).isEmpty();
    }

    @Test
    void itAcceptsTheIssuersSignedTokensAndRefusesForgedOnes() throws Exception {
        TokenSigner issuer = TokenSigner.ed25519("ed1", issuerKeys.getPrivate());
        FencingToken signed = issuer.sign(new FencingToken("accounts:1", 10, "issuer-lease-1"));
        ResponseEntity<Map<String, Object>> accepted = post("/internal/accounts/1/deposit/3", signed.toText());
        assertThat(accepted.getStatusCode().value()).isEqualTo(200);
        assertThat(database.maxSeen("accounts:1")).hasValue(10);

        KeyPair otherKeys = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        FencingToken otherKey = TokenSigner.ed25519("ed1", otherKeys.getPrivate())
                .sign(new FencingToken("accounts:1", 11, "issuer-lease-2"));
        FencingToken hmac = TokenSigner.hmac("ed1", new byte[32]).sign(new FencingToken("accounts:1", 12, "x"));
        for (String forged : List.of(FORGED.replace("accounts:3", "accounts:1"),
                otherKey.toText(), hmac.toText())) {
            ResponseEntity<Map<String, Object>> refused = post("/internal/accounts/1/deposit/100", forged);
            assertThat(refused.getStatusCode().value()).as(forged).isEqualTo(403);
            assertThat(refused.getBody()).containsEntry("type", "https://fencing.dev/problems/forged-token");
        }
        assertThat(database.maxSeen("accounts:1")).hasValue(10);
        assertThat(database.balance(1)).hasValue(3);
    }
}
