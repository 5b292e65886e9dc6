package dev.fencing.benchmarks.request;

import dev.fencing.annotation.Fenced;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * One small, realistic transaction twice, on the same Spring proxy: read the order, update it, insert its new line
 * (three statements through {@link JdbcTemplate}). {@link #addLineFenced} is the same work under
 * {@code @Fenced(resource = "orders", key = "#id")}, so the only difference measured is the fence. The table names
 * come from the properties {@code bench.orders-table} and {@code bench.lines-table} (unique per trial).
 */
public class OrderRepository {

    private final JdbcTemplate jdbc;
    private final String selectTotal;
    private final String updateOrder;
    private final String insertLine;

    public OrderRepository(JdbcTemplate jdbc, @Value("${bench.orders-table}") String orders,
                           @Value("${bench.lines-table}") String lines) {
        this.jdbc = jdbc;
        this.selectTotal = "SELECT total FROM " + orders + " WHERE id = ?";
        this.updateOrder = "UPDATE " + orders + " SET total = total + ?, version = version + 1 WHERE id = ?";
        this.insertLine = "INSERT INTO " + lines + " (order_id, amount) VALUES (?, ?)";
    }

    /** Reads order {@code id}, adds {@code amount} to it and inserts the line; returns the new total. */
    public long addLine(long id, long amount) {
        Long total = jdbc.queryForObject(selectTotal, Long.class, id);
        if (total == null) {
            throw new IllegalStateException("order " + id + " has no total");
        }
        if (jdbc.update(updateOrder, amount, id) != 1) {
            throw new IllegalStateException("order " + id + " does not exist");
        }
        jdbc.update(insertLine, id, amount);
        return total + amount;
    }

    /** {@link #addLine}, fenced per order: the caller's token for {@code orders:<id>} is checked first. */
    @Fenced(resource = "orders", key = "#id")
    public long addLineFenced(long id, long amount) {
        return addLine(id, amount);
    }
}
