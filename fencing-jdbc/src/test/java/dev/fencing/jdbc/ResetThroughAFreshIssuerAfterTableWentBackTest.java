package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.issuer.Lease;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Re-trial (retry2) of fc248a8: the same documented reset after the lease table went back, asked through an issuer
 * instance that did not hand out the newer tokens: the admin CLI (reset-floor builds a JdbcTokenIssuer of its own), the
 * actuator of an instance started after the restore, or of another instance than the one that issued them.
 */
@Timeout(60)
class ResetThroughAFreshIssuerAfterTableWentBackTest {

    @ParameterizedTest
    @EnumSource(value = Database.class, names = {"POSTGRESQL"})
    void aResetThroughAFreshIssuerAfterTheLeaseTableWentBackKeepsTheZombieOut(Database database) throws Throwable {
        String table = Database.uniqueTable("retry2_lease");
        try (HikariDataSource ds = database.newPool(4)) {
            try {
                JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(ds).table(table).createTableIfMissing(true)
                        .leaseTime(Duration.ofSeconds(30)).build();
                InMemoryFenceStore store = new InMemoryFenceStore();
                String r = "retry2:ledger:1";
                for (int i = 0; i < 3; i++) { // other resources locked and written: all go back with the restore
                    try (Lease l = issuer.acquire("retry2:ledger:other" + i, Duration.ofSeconds(5))) {
                        store.fence(l.token().resource(), l.token(), () -> null);
                    }
                }
                try (Lease l = issuer.acquire(r, Duration.ofSeconds(5))) {
                    store.fence(r, l.token(), () -> null);
                }
                JdbcTemplate jdbc = new JdbcTemplate(ds);
                jdbc.execute("CREATE TABLE " + table + "_bak AS SELECT * FROM " + table); // a backup, token 1
                for (int i = 0; i < 3; i++) {
                    try (Lease l = issuer.acquire("retry2:ledger:other" + i, Duration.ofSeconds(5))) {
                        store.fence(l.token().resource(), l.token(), () -> null);
                    }
                }
                Lease z = issuer.acquire(r, Duration.ofSeconds(5)); // the zombie (token 2), paused, lease lost
                FencingToken zombie = z.token();
                z.close();
                try (Lease l = issuer.acquire(r, Duration.ofSeconds(5))) { // the next holder writes (token 3)
                    store.fence(r, l.token(), () -> null);
                }
                jdbc.execute("DELETE FROM " + table); // the lease table restored from the backup
                jdbc.execute("INSERT INTO " + table + " SELECT * FROM " + table + "_bak");
                // the CLI's reset-floor, or a restarted instance's actuator: an issuer that handed out nothing yet
                JdbcTokenIssuer fresh = JdbcTokenIssuer.builder(ds).table(table).build();
                try {
                    new dev.fencing.recovery.MaxSeenReset(store, fresh, new dev.fencing.metrics.AdminMetrics(
                            new io.micrometer.core.instrument.simple.SimpleMeterRegistry()))
                            .toHighestIssued(r, "ops:retry2", false);
                } catch (RuntimeException refused) {
                    return; // refused: nothing reopened
                }
                assertThatThrownBy(() -> store.fence(r, zombie, () -> null))
                        .as("zombie %s after the reset (max_seen now %s)", zombie, store.maxSeen(r)).isNotNull();
            } finally {
                new JdbcTemplate(ds).execute("DROP TABLE IF EXISTS " + table + "_bak");
                new JdbcTemplate(ds).execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }
}
