package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.issuer.Lease;
import dev.fencing.testsupport.LogRecords;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lease taken more than a second past the acquire timeout (its attempt began before it, then waited that long for
 * a pooled connection) is said at WARNING with the real wait: the call starts later than its caller was told it could
 * wait, and nothing else would show it.
 */
@Timeout(60)
class LateLeaseTest {

    @Test
    void aLeaseTakenPastTheAcquireTimeoutIsLoggedWithTheRealWait() throws Exception {
        AtomicBoolean slow = new AtomicBoolean();
        String table = Database.uniqueTable("late_lease");
        try (LogRecords log = LogRecords.of(JdbcTokenIssuer.class);
             HikariDataSource pool = Database.H2.newPool(2)) {
            List<LogRecord> records = log.records();
            // a pool that makes the next connection wait 1.6 s, as an exhausted or reconnecting pool does
            DelegatingDataSource waiting = new DelegatingDataSource(pool) {
                @Override
                public Connection getConnection() throws SQLException {
                    if (slow.getAndSet(false)) {
                        try {
                            Thread.sleep(1_600);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    return super.getConnection();
                }
            };
            JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(waiting).table(table).createTableIfMissing(true).build();
            try (Lease onTime = issuer.acquire("ledger", Duration.ofMillis(200))) {
                assertThat(onTime.token().value()).isPositive();
            }
            assertThat(records).as("nothing said of a lease taken in time").isEmpty();

            slow.set(true);
            try (Lease late = issuer.acquire("ledger", Duration.ofMillis(200))) {
                assertThat(late.token().value()).isPositive();
            }
            assertThat(records).hasSize(1);
            assertThat(records.get(0).getLevel()).isEqualTo(Level.WARNING);
            assertThat(records.get(0).getMessage()).contains("Locked resource 'ledger'")
                    .contains("past the acquire timeout").contains("spring.datasource.hikari.connection-timeout");
            try (var connection = pool.getConnection(); var statement = connection.createStatement()) {
                statement.execute("DROP TABLE " + table);
            }
        }
    }
}
