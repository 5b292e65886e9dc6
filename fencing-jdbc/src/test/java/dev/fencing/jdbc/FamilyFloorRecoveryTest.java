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
 * A forged token's max_seen folded into its family's floor would lock the whole family out: compaction given the
 * issuer leaves such a row unfolded and says so; folded anyway (compaction told of floors only), the two statements
 * of docs/operations.md ("A family floor no issuer reached") let the family in again, and stale tokens stay out.
 */
@Timeout(60)
class FamilyFloorRecoveryTest {

    private static final long V = 4611686018427387904L; // 2^62, the value the runbook suggests

    /** The runbook's statements, as docs/operations.md shows them (SnippetCheckTest holds the page to this file). */
    private static java.util.List<String> runbookStatements() throws java.io.IOException {
        try (var in = FamilyFloorRecoveryTest.class.getResourceAsStream("family-floor-recovery-postgresql.sql")) {
            String text = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            String region = text.substring(text.indexOf("tag::lower[]"), text.indexOf("-- end::lower[]"));
            java.util.List<String> statements = region.lines().skip(1).map(String::strip)
                    .filter(line -> !line.isEmpty()).map(line -> line.replaceAll(";$", "")).toList();
            assertThat(statements).hasSize(2).allMatch(line -> line.contains(String.valueOf(V)));
            return statements;
        }
    }

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
                // told of floors only (as for an issuer it cannot ask what it handed out), compaction folds it
                new JdbcFenceAdmin(store).compact(Duration.ZERO, 100, issuer::raiseFamilyFloor);
                assertThatThrownBy(() -> issuer.acquire(family + ":901", Duration.ofSeconds(1)))
                        .isInstanceOf(LockAcquisitionException.class).hasMessageContaining("floor of its family")
                        .satisfies(e -> assertThat(((LockAcquisitionException) e).retryable()).isFalse());

                for (String statement : runbookStatements()) {
                    jdbc.update(statement.replace("fencing_max_seen", fence).replace("fencing_lease", lease)
                            .replace("'accounts'", "'" + family + "'"));
                }

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

    @Test
    void compactionGivenTheIssuerLeavesAMaxSeenItNeverHandedOutUnfoldedAndSaysSo() throws Throwable {
        String fence = Database.uniqueTable("fence");
        String lease = Database.uniqueTable("lease");
        try (HikariDataSource pool = Database.POSTGRESQL.newPool(4)) {
            JdbcTemplate jdbc = new JdbcTemplate(pool);
            try (dev.fencing.testsupport.LogRecords logs = dev.fencing.testsupport.LogRecords.of(
                    JdbcFenceCompactor.class)) {
                JdbcFenceStore store = JdbcFenceStore.builder(pool).table(fence).createTableIfMissing(true).build();
                JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(pool).table(lease).createTableIfMissing(true).build();
                String family = "acct" + UUID.randomUUID().toString().substring(0, 8);
                long real = 0;
                for (int i = 1; i <= 3; i++) {
                    try (Lease held = issuer.acquire(family + ":" + i, Duration.ofSeconds(5))) {
                        store.fence(family + ":" + i, held.token(), () -> null);
                        real = Math.max(real, held.token().value());
                    }
                }
                store.fence(family + ":900", new FencingToken(family + ":900", Long.MAX_VALUE, "evil"), () -> null);
                Thread.sleep(20);
                JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
                assertThat(admin.compact(Duration.ZERO, 2, issuer).folded()).isEqualTo(3);

                assertThat(admin.familyFloor(family)).hasValue(real);
                assertThat(admin.maxSeen(family + ":900")).as("kept, alone").hasValue(Long.MAX_VALUE);
                try (Lease next = issuer.acquire(family + ":901", Duration.ofSeconds(5))) {
                    assertThat(next.token().value()).isGreaterThan(real).isLessThan(Long.MAX_VALUE);
                    store.fence(family + ":901", next.token(), () -> null);
                }
                assertThat(logs.records()).anySatisfy(r -> assertThat(r.getMessage())
                        .contains("left 1 resources unfolded").contains("'" + family + ":900' (" + Long.MAX_VALUE)
                        .contains("max_seen reset"));
            } finally {
                jdbc.execute("DROP TABLE IF EXISTS " + fence);
                jdbc.execute("DROP TABLE IF EXISTS " + lease);
            }
        }
    }
}
