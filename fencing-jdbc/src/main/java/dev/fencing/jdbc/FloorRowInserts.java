package dev.fencing.jdbc;

import dev.fencing.store.sql.FloorRows;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * MariaDB: creates the floor rows {@link FloorRows} asks for ({@code INSERT IGNORE}, {@link
 * dev.fencing.store.sql.FenceSql#floorRowSql}), each in a transaction of its own on one background thread, which
 * starts on demand and ends after a minute idle (nothing to shut down). The thread takes its connection from the pool
 * like any caller; the check that asked does not wait for it.
 */
final class FloorRowInserts implements FloorRows.Creator {

    private final JdbcTemplate jdbc;
    private final TransactionTemplate transactions;
    private final String sql;
    private final ThreadPoolExecutor thread;

    FloorRowInserts(JdbcTemplate jdbc, TransactionTemplate transactions, String sql, String table) {
        this.jdbc = jdbc;
        this.transactions = transactions;
        this.sql = sql;
        this.thread = new ThreadPoolExecutor(0, 1, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), task -> {
            Thread t = new Thread(task, "fencing-floor-rows-" + table);
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public void start(String floorKey, Runnable created, Consumer<Throwable> failed) {
        thread.execute(() -> {
            try {
                transactions.executeWithoutResult(status -> jdbc.update(sql, floorKey));
            } catch (RuntimeException e) {
                failed.accept(e);
                return;
            }
            created.run();
        });
    }
}
