package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@link AutocommitBoundConnectionTest} with a pool whose connections are handed out with autoCommit=false (Hikari's
 * autoCommit=false): the connection a statement bound in another manager's transaction is in a transaction nobody
 * commits. Joined, 33's acknowledged write was rolled back when the pool took the connection back (a re-trial found
 * it); the call runs in a transaction of its own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class BoundConnectionAutocommitOffTest {
    private HikariDataSource pg;
    private JdbcTemplate jdbc;
    private JdbcFenceStore store;
    private final String fence = "acoff_fence_" + java.util.UUID.randomUUID().toString().substring(0, 8);
    private final String data = "acoff_data_" + java.util.UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    void setUp() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(Database.POSTGRESQL.url);
        config.setUsername("postgres");
        config.setPassword("");
        config.setMaximumPoolSize(4);
        config.setAutoCommit(false);
        pg = new HikariDataSource(config);
        jdbc = new JdbcTemplate(pg);
        new TransactionTemplate(new org.springframework.jdbc.datasource.DataSourceTransactionManager(pg))
                .executeWithoutResult(s -> {
                    jdbc.execute("DROP TABLE IF EXISTS " + data);
                    jdbc.execute(Database.POSTGRESQL.createDataTable(data));
                });
        store = JdbcFenceStore.builder(pg).table(fence).createTableIfMissing(true)
                .lockTimeout(Duration.ofSeconds(2)).build();
        store.verifyTable();
    }

    @AfterAll
    void tearDown() {
        new TransactionTemplate(new org.springframework.jdbc.datasource.DataSourceTransactionManager(pg))
                .executeWithoutResult(s -> {
                    jdbc.execute("DROP TABLE IF EXISTS " + fence);
                    jdbc.execute("DROP TABLE IF EXISTS " + data);
                });
        pg.close();
    }

    private void fenced(String r, FencingToken t, Runnable body) {
        FencedCalls.fence(store, r, t, body);
    }

    private void insert(String r, FencingToken t) {
        jdbc.update("INSERT INTO " + data + " (k, token, v) VALUES (?, ?, ?)", r, t.value(), t.holder());
    }

    private List<Long> rows(String r) {
        return new TransactionTemplate(new org.springframework.jdbc.datasource.DataSourceTransactionManager(pg))
                .execute(s -> jdbc.queryForList("SELECT token FROM " + data + " WHERE k = ? ORDER BY id",
                        Long.class, r));
    }

    @Test
    void resourcelessStepWithAReaderStatementThenAFencedCall() throws Exception {
        String r = "acoff";
        FencingToken seed = new FencingToken(r, 10, "seed");
        fenced(r, seed, () -> insert(r, seed));
        System.out.println("seed rows=" + rows(r));
        FencingToken t33 = new FencingToken(r, 33, "h33");
        FencingToken t34 = new FencingToken(r, 34, "h34");
        AutocommitBoundConnectionTest.Resourceless batchTm = new AutocommitBoundConnectionTest.Resourceless();
        String[] newer = new String[1];
        boolean[] returned = new boolean[1];
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(batchTm).executeWithoutResult(s -> {
            jdbc.queryForObject("SELECT 1", Integer.class); // a reader's statement binds a connection
            fenced(r, t33, () -> {
                newer[0] = CompletableFuture.supplyAsync(() -> {
                    try {
                        fenced(r, t34, () -> insert(r, t34));
                        return "ok";
                    } catch (RuntimeException e) {
                        return e.getClass().getSimpleName();
                    }
                }, x -> new Thread(x).start()).join();
                insert(r, t33);
            });
            returned[0] = true;
        }));
        List<Long> rows = rows(r);
        System.out.println("resourceless: thrown=" + thrown + " fencedCallReturned=" + returned[0]
                + " newer(34)=" + newer[0] + " rows=" + rows);
        assertThat(thrown).isNull();
        assertThat(newer[0]).as("34 while 33 holds the fence row").isEqualTo("FenceBusyException");
        assertThat(rows).as("33's acknowledged write").containsExactly(10L, 33L);
    }
}
