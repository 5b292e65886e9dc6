package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.issuer.Lease;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.ArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/** Re-trial (retry2): many threads acquiring one resource on one issuer never trip the went-back guard. */
@Timeout(120)
class ConcurrentAcquiresWentBackGuardTest {

    @ParameterizedTest
    @EnumSource(value = Database.class, names = {"POSTGRESQL", "MARIADB"})
    void concurrentAcquiresOfOneResourceAreNotRefusedAsWentBack(Database database) throws Exception {
        String table = Database.uniqueTable("retry2_lease");
        try (HikariDataSource ds = database.newPool(10)) {
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(ds).table(table).createTableIfMissing(true)
                        .leaseTime(Duration.ofSeconds(30)).build();
                ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
                ConcurrentLinkedQueue<Long> tokens = new ConcurrentLinkedQueue<>();
                List<Future<?>> runs = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    runs.add(pool.submit(() -> {
                        for (int i = 0; i < 15; i++) {
                            try (Lease l = issuer.acquire("retry2:hot:1", Duration.ofSeconds(30))) {
                                tokens.add(l.token().value());
                                issuer.highestIssued("retry2:hot:1");
                            } catch (Throwable e) {
                                failures.add(e);
                            }
                        }
                    }));
                }
                for (Future<?> run : runs) {
                    run.get();
                }
                assertThat(failures).isEmpty();
                assertThat(tokens).hasSize(120).doesNotHaveDuplicates();
            } finally {
                pool.shutdownNow();
                new JdbcTemplate(ds).execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }
}
