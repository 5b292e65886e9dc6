package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingConfigurationException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * H2: a fence table without a unique key on resource, beside a same-named table of another schema that has one. The
 * key check read the index metadata of every schema and passed, and two holders of token 34 both committed (a review
 * found it); it reads the current schema's table when that schema has it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class H2ShadowedKeyTest {

    private HikariDataSource pool;
    private JdbcTemplate jdbc;
    private static final String T = "shadow_" + java.util.UUID.randomUUID().toString().substring(0, 8);
    private static final String OTHER = "SHADOW_"
            + java.util.UUID.randomUUID().toString().substring(0, 8).toUpperCase();

    @BeforeAll
    void setUp() {
        pool = Database.H2.newPool(4);
        jdbc = new JdbcTemplate(pool);
        jdbc.execute("CREATE SCHEMA IF NOT EXISTS " + OTHER);
        jdbc.execute("CREATE TABLE " + OTHER + "." + T + " (resource VARCHAR(256) NOT NULL PRIMARY KEY, "
                + "max_seen BIGINT NOT NULL, holder VARCHAR(256), updated_at TIMESTAMP WITH TIME ZONE DEFAULT "
                + "CURRENT_TIMESTAMP NOT NULL)");
        jdbc.execute("CREATE TABLE PUBLIC." + T + " (resource VARCHAR(256) NOT NULL, max_seen BIGINT NOT NULL,"
                + " holder VARCHAR(256), updated_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP NOT NULL)");
    }

    @AfterAll
    void tearDown() {
        jdbc.execute("DROP TABLE IF EXISTS PUBLIC." + T);
        jdbc.execute("DROP TABLE IF EXISTS " + OTHER + "." + T);
        jdbc.execute("DROP SCHEMA IF EXISTS " + OTHER);
        pool.close();
    }

    @Test
    @Timeout(60)
    void aTableWithoutAUniqueKeyIsRefusedEvenWhenAnotherSchemaHasOneOfTheSameName() throws Exception {
        DataSourceTransactionManager tm = new DataSourceTransactionManager(pool);
        JdbcFenceStore store = JdbcFenceStore.builder(pool).transactionManager(tm).table(T).build();
        Throwable refused = catchThrowable(store::verifyTable);
        System.out.println("shadowed key, verify: " + refused);
        if (refused == null) {
            String r = "shadow";
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CompletableFuture<String> a = CompletableFuture.supplyAsync(() -> run(tm, store, r, "a", held, release),
                    x -> new Thread(x).start());
            assertThat(held.await(20, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<String> b = CompletableFuture.supplyAsync(() -> run(tm, store, r, "b",
                    new CountDownLatch(1), new CountDownLatch(0)), x -> new Thread(x).start());
            Thread.sleep(500);
            release.countDown();
            System.out.println("shadowed key: token 34 holder a=" + a.get(20, TimeUnit.SECONDS) + ", holder b="
                    + b.get(20, TimeUnit.SECONDS) + "; rows="
                    + jdbc.queryForList("SELECT holder FROM PUBLIC." + T + " WHERE resource = ?", String.class, r));
        }
        assertThat(refused).isInstanceOf(FencingConfigurationException.class);
    }

    private static String run(DataSourceTransactionManager tm, JdbcFenceStore store, String r, String holder,
                              CountDownLatch held, CountDownLatch release) {
        try {
            new TransactionTemplate(tm).executeWithoutResult(s -> {
                try {
                    store.fence(r, new FencingToken(r, 34, holder), () -> {
                        held.countDown();
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
        }
    }
}
