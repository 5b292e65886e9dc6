package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingConfigurationException;
import dev.fencing.rule.OutOfRangeTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.FenceStore;
import dev.fencing.store.sql.FenceSql;
import dev.fencing.testsupport.BoundedAdvanceContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.JdbcTemplate;

import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The JDBC store built with {@code maxAdvance}: the store contract and the bound's own, decided by the one check
 * statement of each dialect; the floor an administrator raises is not bounded.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcBoundedAdvanceContract extends BoundedAdvanceContract {

    private HikariDataSource dataSource;
    private String table;
    private JdbcFenceStore store;

    abstract Database database();

    @BeforeAll
    void createStore() {
        dataSource = database().newPool(10);
        table = Database.uniqueTable("bounded");
        store = JdbcFenceStore.builder(dataSource).table(table).createTableIfMissing(true)
                .maxAdvance(MAX_ADVANCE).build();
    }

    @AfterAll
    void dropTable() {
        new JdbcTemplate(dataSource).execute("DROP TABLE IF EXISTS " + table);
        dataSource.close();
    }

    @Override
    protected FenceStore store() {
        return store;
    }

    @Test
    void raisingAFloorIsNotBoundedAndTheBoundMustBePositive() throws Throwable {
        String r = freshResource();
        store.fence(r, token(r, 1, "a"), () -> null);
        JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
        admin.raiseFloor(r, 50 * MAX_ADVANCE);
        assertThat(admin.maxSeen(r)).hasValue(50 * MAX_ADVANCE);
        assertThat(store.maxAdvance()).isEqualTo(MAX_ADVANCE);
        assertThatThrownBy(() -> JdbcFenceStore.builder(dataSource).maxAdvance(0))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("maxAdvance");
    }
    /**
     * A resource far below its family's floor (a sibling acquired much more often, then folded): the lease issuer's
     * next token for it clears the floor, so the bound counts from the floor, not from the resource's own row (a
     * trial: every write of the busy sibling was refused as out-of-range until its own row was folded, 30 days on).
     */
    @Test
    void theBoundCountsFromTheFamilysFloorWhenItIsAboveTheResourcesOwnRow() throws Throwable {
        String family = "floored" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        String busy = family + ":busy";
        store.fence(busy, token(busy, 5, "a"), () -> null);
        JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
        long floor = 5 + 50 * MAX_ADVANCE; // the highest max_seen of the family's folded resources
        admin.raiseFloor(FenceSql.familyFloorKey(family), floor);

        assertThatThrownBy(() -> store.fence(busy, token(busy, floor + MAX_ADVANCE + 1, "forged"), () -> null))
                .isInstanceOf(OutOfRangeTokenException.class);
        assertThat(store.fence(busy, token(busy, floor + 1, "b"), () -> "written")).isEqualTo("written");

        assertThat(admin.maxSeen(busy)).hasValue(floor + 1);
        assertThatThrownBy(() -> store.fence(busy, token(busy, 5, "a"), () -> null))
                .isInstanceOf(StaleTokenException.class);
    }
}
