package dev.fencing.verify.client;

import org.springframework.jdbc.core.JdbcTemplate;

/** Inserts log rows with plain JDBC on the caller's transaction: no fence, the lock alone. */
public class JdbcAppendRows implements AppendRows {

    private final JdbcTemplate jdbc;
    private final String table;

    public JdbcAppendRows(JdbcTemplate jdbc, String table) {
        this.jdbc = jdbc;
        this.table = table;
    }

    @Override
    public void append(int row, String resource, long token, int process, long op) {
        jdbc.update("INSERT INTO " + table + " (resource, token, process, op) VALUES (?, ?, ?, ?)", resource, token,
                process, op);
    }
}
