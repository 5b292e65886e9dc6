package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A forged token's max_seen that compaction folded into its family's floor locks the whole family out; the two
 * statements of docs/operations.md ("A family floor no issuer reached") let it in again, and stale tokens stay out.
 */
@Timeout(60)
class FamilyFloorRecoveryTest {

    private static final long V = 4611686018427387904L; // 2^62, the value the runbook suggests

    @Test
    void theRunbooksStatementsLowerAFamilyFloorAForgedTokenPoisoned() throws Throwable {
        String fence = Database.uniqueTable("fence");
        String lease = Database.uniqueTable("lease");
        try (HikariDataSource pool = Database.POSTGRESQL.newPool(4)) {
            JdbcTemplate jdbc = new JdbcTemplate(pool);
            try {
                JdbcFenceStore store = JdbcFenceStore.builder(pool).table(fence).createTableIfMissing(true).build();
                JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(pool).table(lease).createTableIfMissing(true).build();
                String family = "acct" + UUID.randomUUID().toString().substring(0, 8);
                try (Lease real = issuer.acquire(family + ":1", Duration.ofSeconds(5))) {
                    store.fence(family + ":1", real.token(), () -> null);
                }
                store.fence(family + ":900", new FencingToken(family + ":900", Long.MAX_VALUE, "evil"), () -> null);
                Thread.sleep(20);
                new JdbcFenceAdmin(store).compact(Duration.ZERO, 100, issuer);
                assertThatThrownBy(() -> issuer.acquire(family + ":901", Duration.ofSeconds(1)))
                        .isInstanceOf(LockAcquisitionException.class).hasMessageContaining("floor of its family")
                        .satisfies(e -> assertThat(((LockAcquisitionException) e).retryable()).isFalse());

                jdbc.update("UPDATE " + fence + " SET max_seen = " + V + " WHERE resource = ? || chr(31)", family);
                jdbc.update("UPDATE " + lease + " SET token = " + V + " WHERE resource = chr(1) || ?", family);

                try (Lease next = issuer.acquire(family + ":901", Duration.ofSeconds(5))) {
                    assertThat(next.token().value()).isGreaterThan(V);
                    store.fence(family + ":901", next.token(), () -> null);
                }
                assertThatThrownBy(() -> store.fence(family + ":1", new FencingToken(family + ":1", 2, "old"),
                        () -> null)).isInstanceOf(StaleTokenException.class);
            } finally {
                jdbc.execute("DROP TABLE IF EXISTS " + fence);
                jdbc.execute("DROP TABLE IF EXISTS " + lease);
            }
        }
    }
}
