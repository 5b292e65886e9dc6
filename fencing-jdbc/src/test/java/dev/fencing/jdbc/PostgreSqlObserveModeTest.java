package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingConfigurationException;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.mode.FenceMode;
import dev.fencing.mode.FenceModes;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.FencedCall;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Observe mode with the JDBC store on PostgreSQL, inside the caller's transaction: a stale token's write runs and
 * commits with the rest of the transaction (the rejection left it usable, not rollback-only) and max_seen stays
 * where it was; in enforce mode the same call is refused. A store checking at commit refuses observe mode at build.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgreSqlObserveModeTest {

    private HikariDataSource pool;
    private JdbcTemplate jdbc;
    private DataSourceTransactionManager tm;
    private String fenceTable;
    private String dataTable;
    private JdbcFenceStore store;

    @BeforeAll
    void setUp() {
        pool = Database.POSTGRESQL.newPool(4);
        jdbc = new JdbcTemplate(pool);
        tm = new DataSourceTransactionManager(pool);
        fenceTable = Database.uniqueTable("fence");
        dataTable = Database.uniqueTable("data");
        jdbc.execute(Database.POSTGRESQL.createDataTable(dataTable));
        store = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable).createTableIfMissing(true)
                .build();
    }

    @AfterAll
    void tearDown() {
        jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
        jdbc.execute("DROP TABLE IF EXISTS " + dataTable);
        pool.close();
    }

    private Object inTransaction(FenceGuard guard, FencePoint point, FencingToken token, String value) {
        FencedCall<Object> write = () -> jdbc.update("INSERT INTO " + dataTable + " (k, token, v) VALUES (?, ?, ?)",
                point.resource(), token.value(), value);
        return new TransactionTemplate(tm).execute(status -> {
            jdbc.update("INSERT INTO " + dataTable + " (k, token, v) VALUES (?, ?, ?)", point.resource(),
                    token.value(), value + "-before");
            try (FencingScope ignored = FencingContext.bind(token)) {
                return guard.invoke(point, new Object[0], write);
            } catch (RuntimeException e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        });
    }

    private long rows(String value) {
        return jdbc.queryForObject("SELECT COUNT(*) FROM " + dataTable + " WHERE v LIKE ?", Long.class, value + "%");
    }

    @Test
    void aStaleWriteInObserveModeCommitsWithItsTransactionAndLeavesMaxSeen() {
        String resource = "observed-" + System.nanoTime();
        FenceModes modes = new FenceModes(FenceMode.ENFORCE, Map.of(resource, FenceMode.OBSERVE));
        FenceGuard guard = FenceGuard.builder(store).modes(modes).build();
        FencePoint point = new FencePoint("Notes.save()", resource, null, null, false, FencingMetrics.noop());

        inTransaction(guard, point, new FencingToken(resource, 9, "current"), "current");
        inTransaction(guard, point, new FencingToken(resource, 6, "zombie"), "zombie");

        assertThat(rows("zombie")).as("the stale write and the rest of its transaction committed").isEqualTo(2);
        assertThat(new JdbcFenceAdmin(store).maxSeen(resource)).hasValue(9);
        assertThat(modes.observed().calls()).singleElement().satisfies(call -> {
            assertThat(call.count("stale")).isEqualTo(1);
            assertThat(call.count("accepted")).isEqualTo(1);
        });

        modes.set(resource, FenceMode.ENFORCE, "test");
        assertThatThrownBy(() -> inTransaction(guard, point, new FencingToken(resource, 7, "refused"), "refused"))
                .isInstanceOf(StaleTokenException.class);
        assertThat(rows("refused")).as("enforce mode: nothing of the transaction persisted").isZero();
        assertThat(new JdbcFenceAdmin(store).maxSeen(resource)).hasValue(9);
    }

    @Test
    void aStoreCheckingAtCommitRefusesObserveMode() {
        JdbcFenceStore atCommit = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable)
                .checkAtCommit(true).build();
        FenceModes modes = new FenceModes(FenceMode.OBSERVE, Map.of());
        assertThatThrownBy(() -> FenceGuard.builder(atCommit).modes(modes).build())
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("check-at-commit")
                .hasMessageContaining("observe mode as the default of every resource");
    }
}
