package dev.fencing.benchmarks;

import dev.fencing.annotation.Fenced;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The same two transaction shapes twice: fenced per key, and plain. Both run through the same Spring proxy, so the
 * only difference measured is the fence.
 */
public class BenchRepository {

    private final JdbcTemplate jdbc;
    private final String rows;
    private final String accounts;

    public BenchRepository(JdbcTemplate jdbc, String rows, String accounts) {
        this.jdbc = jdbc;
        this.rows = rows;
        this.accounts = accounts;
    }

    @Fenced(resource = "bench", key = "#key")
    public void insertFenced(String key, int value) {
        insertPlain(key, value);
    }

    public void insertPlain(String key, int value) {
        jdbc.update("INSERT INTO " + rows + " (k, v) VALUES (?, ?)", key, value);
    }

    @Fenced(resource = "bench", key = "#key")
    public void transferFenced(String key, int from, int to) {
        transferPlain(key, from, to);
    }

    /** Read, two updates, an insert. */
    public void transferPlain(String key, int from, int to) {
        Long balance = jdbc.queryForObject("SELECT balance FROM " + accounts + " WHERE id = ?", Long.class, from);
        jdbc.update("UPDATE " + accounts + " SET balance = balance - 1 WHERE id = ?", from);
        jdbc.update("UPDATE " + accounts + " SET balance = balance + 1 WHERE id = ?", to);
        jdbc.update("INSERT INTO " + rows + " (k, v) VALUES (?, ?)", key, balance == null ? 0 : balance.intValue());
    }
}
