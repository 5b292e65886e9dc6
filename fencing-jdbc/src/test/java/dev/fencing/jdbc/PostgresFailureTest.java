package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.JdbcTemplate;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** A connection killed in the middle of a fenced transaction leaves max_seen and the data consistent. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresFailureTest {

    private HikariDataSource pool;
    private HikariDataSource admin;
    private JdbcTemplate jdbc;
    private String fenceTable;
    private String dataTable;
    private JdbcFenceStore store;

    @BeforeAll
    void setUp() {
        pool = Database.POSTGRESQL.newPool(4);
        admin = Database.POSTGRESQL.newPool(1);
        jdbc = new JdbcTemplate(pool);
        fenceTable = Database.uniqueTable("fence");
        dataTable = Database.uniqueTable("data");
        jdbc.execute(Database.POSTGRESQL.createDataTable(dataTable));
        store = JdbcFenceStore.builder(pool).table(fenceTable).createTableIfMissing(true).build();
    }

    @AfterAll
    void tearDown() {
        jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
        jdbc.execute("DROP TABLE IF EXISTS " + dataTable);
        pool.close();
        admin.close();
    }

    @Test
    void backendTerminatedBeforeCommitAdvancesNeitherMaxSeenNorData() throws Throwable {
        String r = "killed-" + System.nanoTime();
        store.fence(r, new FencingToken(r, 39, "earlier"), () -> null);
        AtomicInteger pid = new AtomicInteger();
        CountDownLatch written = new CountDownLatch(1);
        CountDownLatch killed = new CountDownLatch(1);
        CompletableFuture<Throwable> victim = CompletableFuture.supplyAsync(() -> {
            try {
                store.fence(r, new FencingToken(r, 40, "victim"), () -> {
                    jdbc.update("INSERT INTO " + dataTable + " (k, token, v) VALUES (?, 40, 'lost')", r);
                    pid.set(jdbc.queryForObject("SELECT pg_backend_pid()", Integer.class));
                    written.countDown();
                    killed.await();
                    return null;
                });
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        assertThat(written.await(30, TimeUnit.SECONDS)).isTrue();
        // the check (max_seen := 40) and the insert are done, not committed: kill the session now
        assertThat(new JdbcTemplate(admin).queryForObject("SELECT pg_terminate_backend(?)", Boolean.class, pid.get()))
                .isTrue();
        killed.countDown();
        Throwable failure = victim.get(30, TimeUnit.SECONDS);

        assertThat(failure).isNotNull().isNotInstanceOf(StaleTokenException.class);
        assertThat(new JdbcFenceAdmin(store).maxSeen(r)).hasValue(39);
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + dataTable + " WHERE k = ?", Long.class, r)).isZero();
        // the database is consistent and usable: the 40 holder may write now, an older token may not
        store.fence(r, new FencingToken(r, 40, "victim"), () ->
                jdbc.update("INSERT INTO " + dataTable + " (k, token, v) VALUES (?, 40, 'retried')", r));
        assertThat(new JdbcFenceAdmin(store).maxSeen(r)).hasValue(40);
        assertThat(jdbc.queryForList("SELECT v FROM " + dataTable + " WHERE k = ?", String.class, r))
                .containsExactly("retried");
    }
}
