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

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * the lease table restored from an older backup, truncated, or its row deleted, under a running
 * issuer: its counter goes back, and the same issuer must not hand out a token at or below one it handed out before
 * (on a resource whose max_seen is below the unpresented token, the old holder would write after the new one).
 */
@Timeout(60)
class LeaseTableWentBackTest {

    @ParameterizedTest
    @EnumSource(value = Database.class, names = {"POSTGRESQL", "MARIADB"})
    void aCounterThatWentBackIsRefusedByTheIssuerThatHandedOutMore(Database database) throws Throwable {
        String table = Database.uniqueTable("mono_lease");
        try (HikariDataSource ds = database.newPool(4)) {
            try {
                JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(ds).table(table).createTableIfMissing(true)
                        .leaseTime(Duration.ofSeconds(30)).build();
                InMemoryFenceStore store = new InMemoryFenceStore();
                String r = "mono:quiet:1";
                for (int i = 0; i < 5; i++) {
                    try (Lease l = issuer.acquire(r, Duration.ofSeconds(5))) {
                        l.token();
                    }
                }
                Lease z = issuer.acquire(r, Duration.ofSeconds(5)); // the zombie, paused before its first write
                FencingToken zombie = z.token();
                z.close();
                new JdbcTemplate(ds).execute("DELETE FROM " + table); // truncated, or restored from before the rows
                FencingToken newer;
                try (Lease b = issuer.acquire(r, Duration.ofSeconds(5))) {
                    newer = b.token();
                } catch (RuntimeException refused) {
                    assertThat(refused).hasMessageContaining("went back"); // fail closed
                    return;
                }
                store.fence(r, newer, () -> null);
                assertThatThrownBy(() -> store.fence(r, zombie, () -> null))
                        .as("zombie %s after new holder %s", zombie, newer).isNotNull();
            } finally {
                new JdbcTemplate(ds).execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }

    /** The documented reset through the running issuer after its lease table went back: no zombie window. */
    @ParameterizedTest
    @EnumSource(value = Database.class, names = {"POSTGRESQL"})
    void aResetAfterTheLeaseTableWentBackKeepsTheZombieOut(Database database) throws Throwable {
        String table = Database.uniqueTable("mono_lease");
        try (HikariDataSource ds = database.newPool(4)) {
            try {
                JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(ds).table(table).createTableIfMissing(true)
                        .leaseTime(Duration.ofSeconds(30)).build();
                InMemoryFenceStore store = new InMemoryFenceStore();
                String r = "mono:ledger:1";
                try (Lease l = issuer.acquire(r, Duration.ofSeconds(5))) {
                    store.fence(r, l.token(), () -> null);
                }
                JdbcTemplate jdbc = new JdbcTemplate(ds);
                jdbc.execute("CREATE TABLE " + table + "_bak AS SELECT * FROM " + table); // a backup, token 1
                Lease z = issuer.acquire(r, Duration.ofSeconds(5)); // the zombie (token 2), paused, lease lost
                FencingToken zombie = z.token();
                z.close();
                try (Lease l = issuer.acquire(r, Duration.ofSeconds(5))) { // the next holder writes (token 3)
                    store.fence(r, l.token(), () -> null);
                }
                jdbc.execute("DELETE FROM " + table); // the lease table restored from the backup
                jdbc.execute("INSERT INTO " + table + " SELECT * FROM " + table + "_bak");
                try {
                    new dev.fencing.recovery.MaxSeenReset(store, issuer, new dev.fencing.metrics.AdminMetrics(
                            new io.micrometer.core.instrument.simple.SimpleMeterRegistry()))
                            .toHighestIssued(r, "ops:mono", false);
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
