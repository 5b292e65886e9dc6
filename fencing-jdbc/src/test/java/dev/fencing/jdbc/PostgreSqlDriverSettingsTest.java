package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The PostgreSQL check (its lock wait bound swapped in, the check, the caller's bound put back, one text) under
 * pgjdbc settings that change how a text of several statements travels: server-side preparing from the first
 * execution with binary results ({@code prepareThreshold=-1}, where pgjdbc sends the last statement's result formats
 * for every statement of the text), from the first ({@code 1}) or never ({@code 0}), and the simple query protocol.
 * The store starts, accepts, rejects, and leaves the caller's {@code lock_timeout} as it was, past the point where
 * pgjdbc switches to a server-prepared statement.
 */
@Timeout(60)
class PostgreSqlDriverSettingsTest {

    @ParameterizedTest
    @ValueSource(strings = {"prepareThreshold=-1", "prepareThreshold=1", "prepareThreshold=0",
            "preferQueryMode=simple", "preferQueryMode=extendedCacheEverything"})
    void theCheckWorksUnder(String setting) throws Throwable {
        String table = Database.uniqueTable("fence");
        try (HikariDataSource pool = Database.POSTGRESQL.newPoolWith(2, setting)) {
            JdbcTemplate jdbc = new JdbcTemplate(pool);
            try {
                JdbcFenceStore store = JdbcFenceStore.builder(pool).table(table).createTableIfMissing(true)
                        .lockTimeout(Duration.ofSeconds(2)).build();
                store.verify();
                for (String r : new String[] {"accounts:1", "plain"}) {
                    for (long value = 1; value <= 8; value++) {
                        store.fence(r, new FencingToken(r, value, "h" + value), () -> null);
                    }
                    assertThatThrownBy(() -> store.fence(r, new FencingToken(r, 3, "old"), () -> null))
                            .isInstanceOf(StaleTokenException.class);
                }
                assertThat(new JdbcFenceAdmin(store).maxSeen("accounts:1")).hasValue(8);
                assertThat(new JdbcFenceAdmin(store).maxSeen("plain")).hasValue(8);
                // the pooled connections' own bound is back (0: the default, wait for ever)
                assertThat(jdbc.queryForObject("SHOW lock_timeout", String.class)).isEqualTo("0");
            } finally {
                jdbc.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }
}
