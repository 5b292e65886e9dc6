package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.issuer.Lease;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * MariaDB in REPEATABLE READ (its default): first acquisitions of new resources that sort into one gap of the lease
 * table (each new key below the last) do not deadlock. A locking read of a missing row locks the gap where it would
 * go; when each acquisition then inserted its row into that gap in the same transaction, two of them deadlocked (the
 * issuer repeated the attempt, and the driver logged each deadlock at WARN). The row is now inserted in a
 * transaction of its own, holding no lock. Counted by the server's {@code Innodb_deadlocks} (this module's test
 * classes run one at a time).
 */
@Timeout(120)
class MariaDbLeaseFirstAcquisitionsTest {

    @Test
    void firstAcquisitionsOfNewResourcesInOneGapDoNotDeadlock() throws Exception {
        String table = Database.uniqueTable("lease");
        try (HikariDataSource pool = Database.MARIADB.newPool(10)) {
            JdbcTemplate jdbc = new JdbcTemplate(pool);
            JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(pool).table(table).createTableIfMissing(true)
                    .leaseTime(Duration.ofSeconds(30)).build();
            try {
                assertThat(jdbc.queryForObject("SELECT @@tx_isolation", String.class)).isEqualTo("REPEATABLE-READ");
                try (Lease first = issuer.acquire("orders:zzz", Duration.ofSeconds(5))) {
                    assertThat(first.token().value()).isPositive();
                }
                AtomicLong next = new AtomicLong(9_999_999);
                long deadlocksBefore = deadlocks(jdbc);
                ExecutorService threads = Executors.newFixedThreadPool(8);
                List<Future<Integer>> done = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    done.add(threads.submit(() -> {
                        int acquired = 0;
                        for (int i = 0; i < 25; i++) {
                            String resource = "orders:A" + next.getAndDecrement(); // each below every key before it
                            try (Lease lease = issuer.acquire(resource, Duration.ofSeconds(20))) {
                                acquired += lease.token().value() == 1 ? 1 : 0;
                            }
                        }
                        return acquired;
                    }));
                }
                int acquired = 0;
                for (Future<Integer> f : done) {
                    acquired += f.get(100, TimeUnit.SECONDS);
                }
                threads.shutdownNow();
                assertThat(acquired).as("first tokens").isEqualTo(200);
                assertThat(deadlocks(jdbc) - deadlocksBefore).as("deadlocks on the server").isZero();
            } finally {
                jdbc.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }

    private static long deadlocks(JdbcTemplate jdbc) {
        return jdbc.queryForObject("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'", (rs, n) -> rs.getLong(2));
    }
}
