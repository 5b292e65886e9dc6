package dev.fencing.verify.client;

import org.springframework.jdbc.core.JdbcTemplate;

/** Reads and writes the counter rows with plain JDBC on the caller's transaction: no fence, the lock alone. */
public class JdbcCounterRows implements CounterRows {

    private final JdbcTemplate jdbc;
    private final String table;

    public JdbcCounterRows(JdbcTemplate jdbc, String table) {
        this.jdbc = jdbc;
        this.table = table;
    }

    @Override
    public long read(int row) {
        Long value = jdbc.queryForObject("SELECT value FROM " + table + " WHERE id = ?", Long.class, row);
        if (value == null) {
            throw new IllegalStateException("the counter row " + row + " of " + table + " holds null");
        }
        return value;
    }

    @Override
    public void write(int row, long value) {
        if (jdbc.update("UPDATE " + table + " SET value = ? WHERE id = ?", value, row) != 1) {
            throw new IllegalStateException("the counter row " + row + " of " + table + " is missing");
        }
    }
}
