package dev.fencing.it.boot;

import org.junit.jupiter.api.Test;
import org.springframework.http.ResponseEntity;

import java.sql.SQLException;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Why signing exists, over real HTTP on PostgreSQL: without {@code fencing.signing.*}, one request with a forged
 * {@code accounts:3#9223372036854775807@evil} header is accepted, max_seen becomes {@code Long.MAX_VALUE}, and every
 * real holder of the lock is refused as stale from then on.
 */
class UnsignedLockOutProofTest extends AbstractSigningProofTest {

    @Override
    List<String> properties() {
        return List.of(); // no fencing.signing.*
    }

    @Test
    void oneForgedHeaderLocksEveryRealHolderOut() throws SQLException {
        assertThat(post("/accounts/3/deposit/5", null).getStatusCode().value()).isEqualTo(200);
        long balance = database.balance(3).orElseThrow();

        ResponseEntity<Map<String, Object>> forged = post("/internal/accounts/3/deposit/1000", FORGED);
        assertThat(forged.getStatusCode().value()).as("accepted: nothing tells it from a real token")
                .isEqualTo(200);
        assertThat(database.maxSeen("accounts:3")).hasValue(Long.MAX_VALUE);
        assertThat(database.balance(3)).hasValue(balance + 1000);

        for (int attempt = 0; attempt < 2; attempt++) {
            ResponseEntity<Map<String, Object>> real = post("/accounts/3/deposit/1", null);
            assertThat(real.getStatusCode().value()).as("the real holder, locked out").isEqualTo(409);
            assertThat(real.getBody()).containsEntry("verdict", "stale");
        }
        assertThat(database.balance(3)).hasValue(balance + 1000);
    }
}
