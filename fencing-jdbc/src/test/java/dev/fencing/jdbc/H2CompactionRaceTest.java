package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * H2 compaction (no table lock: floors raised, a wait, then the deletes in a second transaction) against a check that
 * advanced an idle row and commits while the batch's delete waits for its row: the delete keeps a row advanced above
 * the floor its family was raised to (a review found it deleted, and a zombie's 55 accepted after 60 committed).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class H2CompactionRaceTest {

    private HikariDataSource pool;
    private JdbcTemplate jdbc;
    private DataSourceTransactionManager tm;
    private JdbcFenceStore store;
    private final String table = "h2race_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);

    @BeforeAll
    void setUp() {
        pool = Database.H2.newPool(4);
        jdbc = new JdbcTemplate(pool);
        tm = new DataSourceTransactionManager(pool);
        store = JdbcFenceStore.builder(pool).transactionManager(tm).table(table).createTableIfMissing(true)
                .lockTimeout(Duration.ofMillis(500)).build();
        store.verify();
    }

    @AfterAll
    void tearDown() {
        jdbc.execute("DROP TABLE IF EXISTS " + table);
        pool.close();
    }

    private String fence(String r, FencingToken t, CountDownLatch inBody, CountDownLatch release) {
        try {
            new TransactionTemplate(tm).executeWithoutResult(s -> {
                try {
                    store.fence(r, t, () -> {
                        inBody.countDown();
                        release.await(20, TimeUnit.SECONDS);
                        return null;
                    });
                } catch (RuntimeException e) {
                    throw e;
                } catch (Throwable e) {
                    throw new RuntimeException(e);
                }
            });
            return "accepted";
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName();
        } finally {
            inBody.countDown();
        }
    }

    @Test
    @Timeout(60)
    void aRowAdvancedWhileTheBatchRunsIsNotDeleted() throws Exception {
        String family = "racefam" + UUID.randomUUID().toString().substring(0, 6);
        String r = family + ":1";
        assertThat(fence(r, new FencingToken(r, 50, "h50"), new CountDownLatch(1), new CountDownLatch(0)))
                .isEqualTo("accepted");
        Thread.sleep(50);
        // a newer holder checks 60 and is inside its body, not yet committed
        CountDownLatch inBody = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<String> newer = CompletableFuture.supplyAsync(() -> fence(r, new FencingToken(r, 60, "h60"),
                inBody, release), x -> new Thread(x).start());
        assertThat(inBody.await(10, TimeUnit.SECONDS)).isTrue();
        JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
        CompletableFuture<Object> compaction = CompletableFuture.supplyAsync(
                () -> admin.compact(Duration.ZERO, 100, IssuerFloors.ONE_SEQUENCE), x -> new Thread(x).start());
        Thread.sleep(850); // floors raised, the batch waited 600 ms, and its DELETE now waits for the row
        release.countDown();
        String newerOut = newer.get(20, TimeUnit.SECONDS);
        Object result;
        try {
            result = compaction.get(20, TimeUnit.SECONDS);
        } catch (Exception e) {
            result = e;
        }
        List<String> rows = jdbc.queryForList("SELECT resource || '=' || max_seen FROM " + table
                + " WHERE resource LIKE ?", String.class, family + "%");
        String zombie = fence(r, new FencingToken(r, 55, "h55-zombie"), new CountDownLatch(1), new CountDownLatch(0));
        System.out.println("h2 compaction race: newer(60)=" + newerOut + " compaction=" + result + " rows after="
                + rows.stream().map(x -> x.replace('\u001f', '~')).toList() + " zombie(55)=" + zombie);
        assertThat(newerOut).isEqualTo("accepted");
        assertThat(result).isInstanceOf(dev.fencing.retention.CompactionResult.class);
        assertThat(zombie).as("token 55 after 60 committed").isEqualTo("StaleTokenException");
    }
}
