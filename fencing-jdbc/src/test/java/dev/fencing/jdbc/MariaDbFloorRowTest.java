package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.rule.OutOfRangeTokenException;
import dev.fencing.store.sql.FenceSql;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * MariaDB in REPEATABLE READ (its default): the check's locking read of a family's floor row locks the gap before the
 * family's first resource while that row is missing, so a first check of a new resource in that gap waited for (or
 * deadlocked with) another open one. The store creates each family's floor row, holding 0 (no floor), in the
 * background after the family's first check; from then on the read locks that row only.
 */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MariaDbFloorRowTest {

    private HikariDataSource pool;
    private JdbcTemplate jdbc;
    private DataSourceTransactionManager transactions;
    private String table;
    private JdbcFenceStore store;

    @BeforeAll
    void createStore() {
        pool = Database.MARIADB.newPool(6);
        jdbc = new JdbcTemplate(pool);
        transactions = new DataSourceTransactionManager(pool);
        table = Database.uniqueTable("fence");
        store = JdbcFenceStore.builder(pool).transactionManager(transactions).table(table)
                .createTableIfMissing(true).lockTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    void dropTable() {
        jdbc.execute("DROP TABLE IF EXISTS " + table);
        pool.close();
    }

    @Test
    void theFirstCheckOfAFamilyCreatesItsFloorRowWhichIsNoFloor() throws Throwable {
        assertThat(jdbc.queryForObject("SELECT @@tx_isolation", String.class)).isEqualTo("REPEATABLE-READ");
        store.fence("invoices:7", new FencingToken("invoices:7", 7, "a"), () -> null);
        awaitFloorRow(store, "invoices");

        Map<String, Object> row = jdbc.queryForMap("SELECT max_seen, holder FROM " + table + " WHERE resource = ?",
                FenceSql.familyFloorKey("invoices"));
        assertThat(row.get("max_seen")).isEqualTo(0L);
        assertThat(row.get("holder")).isNull();
        assertThat(new JdbcFenceAdmin(store).familyFloor("invoices")).isEmpty();
        // it refuses no token of a new resource
        store.fence("invoices:8", new FencingToken("invoices:8", 1, "b"), () -> null);
        assertThat(new JdbcFenceAdmin(store).maxSeen("invoices:8")).hasValue(1);
        // a resource without a family has no floor row
        store.fence("plain", new FencingToken("plain", 3, "c"), () -> null);
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + table + " WHERE resource LIKE ?", Long.class,
                "plain%")).isEqualTo(1);
    }

    @Test
    void aFirstCheckBeforeTheFamilysFirstResourceDoesNotWaitForAnOpenOne() throws Throwable {
        store.fence("orders:z", new FencingToken("orders:z", 1, "a"), () -> null);
        awaitFloorRow(store, "orders");
        // an open transaction's first check of orders:m; orders:c sorts between the floor row and it
        try (HeldTransaction open = HeldTransaction.open(transactions,
                () -> fence("orders:m", new FencingToken("orders:m", 5, "m")))) {
            long started = System.nanoTime();
            store.fence("orders:c", new FencingToken("orders:c", 6, "c"), () -> null);
            // a wait for the open transaction's row would last until the 10 s lock wait bound: far above this bound,
            // which a check that does not wait stays under also on a stalled VM
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(4));
        }
        assertThat(new JdbcFenceAdmin(store).maxSeen("orders:m")).hasValue(5);
        assertThat(new JdbcFenceAdmin(store).maxSeen("orders:c")).hasValue(6);
    }

    @Test
    void aBoundOnOneAdvanceDoesNotApplyToAFloorOfZeroButToARaisedOne() throws Throwable {
        JdbcFenceStore bounded = JdbcFenceStore.builder(pool).transactionManager(transactions).table(table)
                .maxAdvance(10).build();
        bounded.fence("payments:1", new FencingToken("payments:1", 1000, "a"), () -> null);
        awaitFloorRow(bounded, "payments");
        bounded.fence("payments:2", new FencingToken("payments:2", 5000, "b"), () -> null);
        assertThat(new JdbcFenceAdmin(bounded).maxSeen("payments:2")).hasValue(5000);

        jdbc.update("UPDATE " + table + " SET max_seen = 6000 WHERE resource = ?",
                FenceSql.familyFloorKey("payments"));
        assertThatThrownBy(() -> bounded.fence("payments:3", new FencingToken("payments:3", 6011, "c"), () -> null))
                .isInstanceOf(OutOfRangeTokenException.class);
        bounded.fence("payments:3", new FencingToken("payments:3", 6010, "c"), () -> null);
        assertThat(new JdbcFenceAdmin(bounded).familyFloor("payments")).hasValue(6000);
    }

    private void fence(String resource, FencingToken token) {
        try {
            store.fence(resource, token, () -> null);
        } catch (Throwable e) {
            throw new AssertionError(e);
        }
    }

    static void awaitFloorRow(JdbcFenceStore store, String family) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!store.hasFloorRow(family)) {
            assertThat(System.nanoTime()).as("the floor row of " + family + " created within 10 s")
                    .isLessThan(deadline);
            Thread.sleep(10);
        }
    }
}
