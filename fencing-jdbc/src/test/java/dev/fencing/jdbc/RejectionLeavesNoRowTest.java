package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * stores.md, "A rejection leaves the row untouched (its transaction rolls back)", and JdbcFenceAdmin.maxSeen, "empty
 * when the resource never accepted a token": a stale first check of a key of a folded family, made outside any
 * transaction (the store opens one), was refused but committed the row its check inserted at the family's floor (a
 * red-team review). The store's own transaction now rolls back on a rejection.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class RejectionLeavesNoRowTest {

    enum Db { POSTGRESQL, MARIADB }

    private final Map<Db, HikariDataSource> pools = new EnumMap<>(Db.class);
    private final Map<Db, JdbcFenceStore> stores = new EnumMap<>(Db.class);
    private final String fenceTable = Database.uniqueTable("rejection_trace");

    @BeforeAll
    void setUp() {
        for (Db db : Db.values()) {
            HikariDataSource pool = Database.valueOf(db.name()).newPool(4);
            pools.put(db, pool);
            JdbcFenceStore store = JdbcFenceStore.builder(pool)
                    .transactionManager(new DataSourceTransactionManager(pool))
                    .table(fenceTable).createTableIfMissing(true).build();
            store.verify();
            stores.put(db, store);
        }
    }

    @AfterAll
    void tearDown() {
        for (Db db : Db.values()) {
            new JdbcTemplate(pools.get(db)).execute("DROP TABLE IF EXISTS " + fenceTable);
            pools.get(db).close();
        }
    }

    @ParameterizedTest
    @EnumSource(Db.class)
    void aRejectedFirstCheckBelowTheFamilyFloorLeavesNoRow(Db db) {
        JdbcFenceStore store = stores.get(db);
        String family = "fam" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        String folded = family + ":1";
        FencedCalls.fence(store, folded, new FencingToken(folded, 100, "h100"), () -> { });
        JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
        admin.compact(Duration.ZERO, 100, IssuerFloors.ONE_SEQUENCE);
        assertThat(admin.familyFloor(family)).hasValue(100);
        String never = family + ":2";
        Throwable stale = catchThrowable(() -> FencedCalls.fence(store, never, new FencingToken(never, 50, "zombie"),
                () -> { throw new AssertionError("the body must not run"); }));
        assertThat(stale).isInstanceOf(StaleTokenException.class);
        List<Map<String, Object>> rows = new JdbcTemplate(pools.get(db)).queryForList("SELECT resource, max_seen, "
                + "holder FROM " + fenceTable + " WHERE resource = ?", never);
        assertThat(admin.maxSeen(never)).as("JdbcFenceAdmin.maxSeen: empty when the resource never accepted a token")
                .isEmpty();
        assertThat(rows).as("a rejection leaves the table untouched").isEmpty();
    }
}
