package dev.fencing.it.boot;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.signing.SigningTokenIssuer;
import dev.fencing.signing.TokenSigner;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;

import java.security.SecureRandom;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import static dev.fencing.it.boot.ProofApp.sample;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 14's attack over real HTTP with signing on ({@code fencing.signing.*}, HMAC-SHA256), the application on
 * PostgreSQL: the forged {@code accounts:3#9223372036854775807@evil} header is refused before the request runs,
 * max_seen and the balance stay as they were, and the next real holder, whose token is signed, is accepted. A token
 * signed for one account cannot be replayed against another, and the secret shows nowhere, not even where the
 * application shows every configuration value.
 */
class SignedTokensProofTest extends AbstractSigningProofTest {

    static final String SECRET = hmacSecret();

    /** A fresh 256-bit HMAC secret in Base64. */
    static String hmacSecret() {
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        return Base64.getEncoder().encodeToString(secret);
    }

    @Override
    List<String> properties() {
        return List.of(
                "fencing.signing.scheme=hmac-sha256",
                "fencing.signing.current-key-id=k1",
                "fencing.signing.keys.k1.secret=" + SECRET,
                // an application that shows every value: the secret must still be masked
                "management.endpoint.configprops.show-values=always",
                "management.endpoint.env.show-values=always");
    }

    /** A real holder outside the application: the issuer's lock, its token signed with the current key. */
    private Lease acquire(String resource) {
        TokenIssuer issuer = new SigningTokenIssuer(context.getBean(TokenIssuer.class),
                context.getBean(TokenSigner.class));
        return issuer.acquire(resource, Duration.ofSeconds(10));
    }

    private static void assertForged(ResponseEntity<Map<String, Object>> answer, String resource) {
        assertThat(answer.getStatusCode().value()).isEqualTo(403);
        assertThat(answer.getHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
        assertThat(answer.getBody()).containsEntry("type", "https://fencing.dev/problems/forged-token")
                .containsEntry("title", "Forged fencing token").containsEntry("resource", resource)
                .containsEntry("verdict", "forged");
        assertThat(answer.getBody().toString()).doesNotContain(SECRET).doesNotContain("k1");
    }

    @Test
    void theForgedMaxValueHeaderIsRefusedAndTheNextSignedHolderIsAccepted() throws SQLException {
        ResponseEntity<Map<String, Object>> first = post("/accounts/3/deposit/5", null);
        assertThat(first.getStatusCode().value()).isEqualTo(200);
        long maxSeen = database.maxSeen("accounts:3").orElseThrow();
        long balance = database.balance(3).orElseThrow();

        assertForged(post("/internal/accounts/3/deposit/1000", FORGED), "accounts:3");
        assertThat(database.maxSeen("accounts:3")).as("max_seen unchanged").hasValue(maxSeen);
        assertThat(database.balance(3)).as("nothing written").hasValue(balance);
        List<Map<String, Object>> rejections = ProofApp.list(ProofApp.getJson(http, "/actuator/fencing")
                .get("rejections"));
        assertThat(rejections).as("listed among the recent rejections").anySatisfy(rejection -> assertThat(rejection)
                .containsEntry("resource", "accounts:3").containsEntry("verdict", "forged")
                .containsEntry("method", "POST /internal/accounts/3/deposit/1000 (Fencing-Token header)"));

        try (Lease lease = acquire("accounts:3")) {
            FencingToken token = lease.token();
            assertThat(token.isSigned()).isTrue();
            ResponseEntity<Map<String, Object>> accepted = post("/internal/accounts/3/deposit/7",
                    token.toText());
            assertThat(accepted.getStatusCode().value()).isEqualTo(200);
            assertThat(accepted.getBody()).containsEntry("body", Long.toString(token.value()));
            assertThat(database.maxSeen("accounts:3")).hasValue(token.value());
            assertThat(database.balance(3)).hasValue(balance + 7);
        }
        ResponseEntity<Map<String, Object>> next = post("/accounts/3/deposit/1", null);
        assertThat(next.getStatusCode().value()).as("the application's own next lock, signed by the fence")
                .isEqualTo(200);
        assertThat(database.balance(3)).hasValue(balance + 8);

        String scrape = http.get().uri("/actuator/prometheus").retrieve().body(String.class);
        assertThat(sample(scrape, "fencing_checks_total", "resource=\"accounts\"", "outcome=\"forged\""))
                .as("the refusal is counted").isGreaterThanOrEqualTo(1.0);
    }

    @Test
    void aTokenSignedForOneAccountIsRefusedForAnother() throws SQLException {
        try (Lease lease = acquire("accounts:1")) {
            String signed = lease.token().toText();
            String replayed = signed.replaceFirst("^accounts:1#", "accounts:2#");
            assertForged(post("/internal/accounts/2/deposit/50", replayed), "accounts:2");

            ResponseEntity<Map<String, Object>> asIs = post("/internal/accounts/2/deposit/50", signed);
            assertThat(asIs.getStatusCode().value()).as("a token for accounts:1 is no token for accounts:2")
                    .isEqualTo(428);
        }
        assertThat(database.maxSeen("accounts:2")).isEmpty();
        assertThat(database.balance(2)).hasValue(0);
    }

    @Test
    void theSecretShowsInNoEndpointEvenWithShowValuesAlways() {
        String configprops = http.get().uri("/actuator/configprops").retrieve().body(String.class);
        assertThat(configprops).contains("currentKeyId").contains("******").doesNotContain(SECRET);
        String env = http.get().uri("/actuator/env").retrieve().body(String.class);
        assertThat(env).contains("fencing.signing.keys.k1.secret").doesNotContain(SECRET);
        assertThat(env).as("show-values=always really shows other values").contains("hmac-sha256");
        String fencing = http.get().uri("/actuator/fencing").retrieve().body(String.class);
        assertThat(fencing).doesNotContain(SECRET);
    }
}
