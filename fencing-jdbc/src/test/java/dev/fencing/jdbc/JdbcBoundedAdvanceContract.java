package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingConfigurationException;
import dev.fencing.store.FenceStore;
import dev.fencing.testsupport.BoundedAdvanceContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.JdbcTemplate;

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
}
