package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionTemplate;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * From a red-team review: a fenced body that ends its transaction itself (a legacy DAO calling {@code commit()} on
 * the transaction's connection) releases the fence row in the middle of the body, and a newer token's write lands
 * before the rest of the body's. On MariaDB and H2 the checks run again before the commit refuse it as a conflict,
 * and the body's later writes roll back (stores.md, "Transactions", which also says PostgreSQL does not notice).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(90)
class BodyEndsItsTransactionTest {

    private final List<Runnable> cleanup = new ArrayList<>();

    @AfterAll
    void close() {
        cleanup.forEach(Runnable::run);
    }

    @ParameterizedTest
    @EnumSource(value = Database.class, names = {"MARIADB", "H2"})
    void aBodyThatCommitsItsConnectionHasItsCommitRefusedOnceANewerTokenWrote(Database db) throws Exception {
        HikariDataSource pool = db.newPool(4);
        JdbcTemplate jdbc = new JdbcTemplate(pool);
        String fenceTable = Database.uniqueTable("ends_fence");
        String dataTable = Database.uniqueTable("ends_data");
        cleanup.add(() -> {
            jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
            jdbc.execute("DROP TABLE IF EXISTS " + dataTable);
            pool.close();
        });
        jdbc.execute(db.createDataTable(dataTable));
        DataSourceTransactionManager tm = new DataSourceTransactionManager(pool);
        JdbcFenceStore store = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable)
                .createTableIfMissing(true).build();
        store.verify();
        String r = "acct:" + UUID.randomUUID();
        CountDownLatch committed = new CountDownLatch(1);
        CountDownLatch newerDone = new CountDownLatch(1);
        FencingToken t34 = new FencingToken(r, 34, "a");
        CompletableFuture<Throwable> old = CompletableFuture.supplyAsync(() -> catchThrowable(() ->
                new TransactionTemplate(tm).executeWithoutResult(s -> FencedCalls.fence(store, r, t34, () -> {
                    jdbc.update("INSERT INTO " + dataTable + " (k, token, v) VALUES (?, 34, 'before')", r);
                    Connection connection = DataSourceUtils.getConnection(pool);
                    try {
                        connection.commit(); // the legacy DAO's own commit
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    } finally {
                        DataSourceUtils.releaseConnection(connection, pool);
                    }
                    committed.countDown();
                    await(newerDone);
                    jdbc.update("INSERT INTO " + dataTable + " (k, token, v) VALUES (?, 34, 'after')", r);
                }))), command -> new Thread(command).start());
        await(committed);
        FencingToken t35 = new FencingToken(r, 35, "b");
        new TransactionTemplate(tm).executeWithoutResult(s -> FencedCalls.fence(store, r, t35, () ->
                jdbc.update("INSERT INTO " + dataTable + " (k, token, v) VALUES (?, 35, 'newer')", r)));
        newerDone.countDown();
        assertThat(old.get(30, TimeUnit.SECONDS)).isInstanceOf(FenceConflictException.class);
        assertThat(jdbc.queryForList("SELECT v FROM " + dataTable + " WHERE k = ? ORDER BY id", String.class, r))
                .containsExactly("before", "newer");
        assertThat(new JdbcFenceAdmin(store).maxSeen(r)).hasValue(35);
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(20, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
