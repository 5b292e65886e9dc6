package dev.fencing.verify.client;

import dev.fencing.verify.workload.SetCodec;
import org.springframework.jdbc.core.JdbcTemplate;

import java.util.List;

/** Reads and writes the set row with plain JDBC on the caller's transaction: no fence, the lock alone. */
public class JdbcSetRows implements SetRows {

    private final JdbcTemplate jdbc;
    private final String table;

    public JdbcSetRows(JdbcTemplate jdbc, String table) {
        this.jdbc = jdbc;
        this.table = table;
    }

    @Override
    public List<Long> read() {
        return SetCodec.decode(jdbc.queryForObject("SELECT elements FROM " + table + " WHERE id = 1", String.class));
    }

    @Override
    public void write(List<Long> elements) {
        int rows = jdbc.update("UPDATE " + table + " SET elements = ? WHERE id = 1", SetCodec.encode(elements));
        if (rows != 1) {
            throw new IllegalStateException("the set row of " + table + " is missing");
        }
    }
}
