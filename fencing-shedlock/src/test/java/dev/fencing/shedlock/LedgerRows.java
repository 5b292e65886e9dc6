package dev.fencing.shedlock;

import dev.fencing.context.FencingContext;
import dev.fencing.token.FencingToken;
import org.springframework.jdbc.core.JdbcTemplate;

import javax.sql.DataSource;

/** The SQL behind both ledgers: one row, id 1, overwritten by each write. */
final class LedgerRows {

    private final JdbcTemplate jdbc;
    private final String table;

    LedgerRows(DataSource dataSource, String table) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.table = table;
    }

    void write(String value) {
        FencingToken token = FencingContext.current(SchedulerApp.RESOURCE);
        jdbc.update("UPDATE " + table + " SET v = ?, token = ? WHERE id = 1", value, token == null ? 0 : token.value());
    }

    static void create(JdbcTemplate jdbc, String table) {
        jdbc.execute("CREATE TABLE " + table + " (id INT PRIMARY KEY, v VARCHAR(64), token BIGINT)");
        jdbc.update("INSERT INTO " + table + " (id, v, token) VALUES (1, 'initial', 0)");
    }

    static String value(JdbcTemplate jdbc, String table) {
        return jdbc.queryForObject("SELECT v FROM " + table + " WHERE id = 1", String.class);
    }
}
