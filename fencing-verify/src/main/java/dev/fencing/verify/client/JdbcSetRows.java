package dev.fencing.verify.client;

import dev.fencing.verify.workload.SetCodec;
import org.springframework.jdbc.core.JdbcTemplate;

import java.util.List;

/** Reads and writes the set rows with plain JDBC on the caller's transaction: no fence, the lock alone. */
public class JdbcSetRows implements SetRows {

    private final JdbcTemplate jdbc;
    private final String table;

    public JdbcSetRows(JdbcTemplate jdbc, String table) {
        this.jdbc = jdbc;
        this.table = table;
    }

    @Override
    public List<Long> read(int row) {
        return SetCodec.decode(jdbc.queryForObject("SELECT elements FROM " + table + " WHERE id = ?", String.class,
                row));
    }

    @Override
    public void write(int row, List<Long> elements) {
        int rows = jdbc.update("UPDATE " + table + " SET elements = ? WHERE id = ?", SetCodec.encode(elements), row);
        if (rows != 1) {
            throw new IllegalStateException("the set row " + row + " of " + table + " is missing");
        }
    }
}
