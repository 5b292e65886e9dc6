package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.recovery.ResetRefusedException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * On H2 the lock wait bound is a session setting, which outlives the transaction on a pooled connection: a reset
 * refused after waiting its bound for a held row puts the connection's own bound back, as a failed check does.
 */
@Timeout(30)
class H2ResetLockTimeoutTest {

    @Test
    void aRefusedResetPutsTheSessionsLockTimeoutBack() throws Throwable {
        String table = Database.uniqueTable("fence");
        try (HikariDataSource pool = Database.H2.newPool(2)) {
            JdbcTemplate jdbc = new JdbcTemplate(pool);
            JdbcFenceStore store = JdbcFenceStore.builder(pool).table(table).createTableIfMissing(true)
                    .lockTimeout(Duration.ofMillis(300)).build();
            JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
            String r = "accounts:1";
            store.fence(r, new FencingToken(r, 10, "a"), () -> null);
            long before = lockTimeoutsOf(pool);
            try (HeldTransaction rowHeld = HeldTransaction.open(new DataSourceTransactionManager(pool),
                    () -> jdbc.queryForObject("SELECT max_seen FROM " + table + " WHERE resource = ? FOR UPDATE",
                            Long.class, r))) {
                assertThatThrownBy(() -> admin.lowerMaxSeen(r, 0)).isInstanceOf(ResetRefusedException.class);
            }
            // both pooled connections: the one the reset ran on has its own bound again
            assertThat(lockTimeoutsOf(pool)).isEqualTo(before);
            jdbc.execute("DROP TABLE " + table);
        }
    }

    /** The session lock timeouts of both pooled connections, held at once so that each is read; their sum. */
    private static long lockTimeoutsOf(HikariDataSource pool) throws Exception {
        try (Connection a = pool.getConnection(); Connection b = pool.getConnection()) {
            return lockTimeout(a) + lockTimeout(b);
        }
    }

    private static long lockTimeout(Connection connection) throws Exception {
        try (Statement statement = connection.createStatement();
             ResultSet rs = statement.executeQuery("SELECT LOCK_TIMEOUT()")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
