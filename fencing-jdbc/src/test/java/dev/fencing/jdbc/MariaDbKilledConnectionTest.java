package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * From a red-team review, MariaDB's side of {@code PostgresFailureTest}: a connection killed ({@code KILL}) between
 * the check and the commit, while a newer token writes, leaves neither the check nor any write of the killed
 * transaction; also with Connector/J's {@code transactionReplay} (in a failover mode, where it works), which
 * reconnects and replays the transaction's statements, the check among them, whose answer nobody reads: the checks
 * run again before the commit refuse it. (Connector/J does not replay a transaction whose {@code COMMIT} failed.)
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(90)
class MariaDbKilledConnectionTest {

    private final List<Runnable> cleanup = new ArrayList<>();

    @AfterAll
    void close() {
        cleanup.forEach(Runnable::run);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "transactionReplay=true"})
    void aKilledTransactionLeavesNothingAndTheNewerTokenWrites(String properties) throws Exception {
        HikariDataSource pool = properties.isEmpty() ? Database.MARIADB.newPool(4) : sequential(properties);
        JdbcTemplate jdbc = new JdbcTemplate(pool);
        String fenceTable = Database.uniqueTable("killed_fence");
        String dataTable = Database.uniqueTable("killed_data");
        cleanup.add(() -> {
            jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
            jdbc.execute("DROP TABLE IF EXISTS " + dataTable);
            pool.close();
        });
        jdbc.execute(Database.MARIADB.createDataTable(dataTable));
        DataSourceTransactionManager tm = new DataSourceTransactionManager(pool);
        JdbcFenceStore store = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable)
                .createTableIfMissing(true).build();
        store.verify();
        String r = "acct:" + UUID.randomUUID();
        FencedCalls.fence(store, r, new FencingToken(r, 39, "earlier"), () -> jdbc.update("INSERT INTO " + dataTable
                + " (k, token, v) VALUES (?, 39, 'earlier')", r));
        AtomicLong id = new AtomicLong();
        CountDownLatch written = new CountDownLatch(1);
        CountDownLatch killed = new CountDownLatch(1);
        CompletableFuture<Throwable> victim = CompletableFuture.supplyAsync(() -> catchThrowable(() ->
                new TransactionTemplate(tm).executeWithoutResult(s -> FencedCalls.fence(store, r,
                        new FencingToken(r, 40, "victim"), () -> {
                            jdbc.update("INSERT INTO " + dataTable + " (k, token, v) VALUES (?, 40, 'lost')", r);
                            id.set(jdbc.queryForObject("SELECT CONNECTION_ID()", Long.class));
                            written.countDown();
                            await(killed);
                            jdbc.update("INSERT INTO " + dataTable + " (k, token, v) VALUES (?, 40, 'after')", r);
                        }))), command -> new Thread(command).start());
        await(written);
        try (HikariDataSource admin = Database.MARIADB.newPool(1)) {
            new JdbcTemplate(admin).execute("KILL " + id.get());
        }
        FencedCalls.fence(store, r, new FencingToken(r, 41, "newer"), () -> jdbc.update("INSERT INTO " + dataTable
                + " (k, token, v) VALUES (?, 41, 'newer')", r));
        killed.countDown();
        Throwable failure = victim.get(30, TimeUnit.SECONDS);
        if (properties.isEmpty()) {
            assertThat(failure).isNotNull();
        } else { // replayed on a new connection, the check's answer unread: the checks run again refuse the commit
            assertThat(failure).isInstanceOf(FenceConflictException.class);
        }
        assertThat(jdbc.queryForList("SELECT v FROM " + dataTable + " WHERE k = ? ORDER BY id", String.class, r))
                .containsExactly("earlier", "newer");
        assertThat(new JdbcFenceAdmin(store).maxSeen(r)).hasValue(41);
    }

    /** A pool whose URL is in a failover mode (Connector/J replays transactions only there). */
    private static HikariDataSource sequential(String properties) {
        com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
        config.setJdbcUrl(Database.MARIADB.url.replace("jdbc:mariadb://", "jdbc:mariadb:sequential://") + "?"
                + properties);
        config.setUsername(Database.MARIADB.user);
        config.setPassword("");
        config.setMaximumPoolSize(4);
        return new HikariDataSource(config);
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(20, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
