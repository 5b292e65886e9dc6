package dev.fencing.jdbc;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A deadlock that a fenced body on MariaDB loses, for the tests of the checks run again before the commit: the body
 * takes row 1 of a lock table and then asks for row 2, which a heavier transaction ({@link #heavier}, so not the
 * victim InnoDB picks) holds while it waits for row 1. Its two tables are the test's, named by it.
 */
final class MariaDbDeadlock {

    private final JdbcTemplate jdbc;
    private final String locks;
    private final String heavy;
    final CountDownLatch bodyHasOne = new CountDownLatch(1);
    final CountDownLatch heavierHasTwo = new CountDownLatch(1);

    MariaDbDeadlock(JdbcTemplate jdbc, String locks, String heavy) {
        this.jdbc = jdbc;
        this.locks = locks;
        this.heavy = heavy;
    }

    /** Creates the lock table (rows 1 and 2) and the heavy transaction's table. */
    static void createTables(JdbcTemplate jdbc, String locks, String heavy) {
        jdbc.execute("CREATE TABLE " + locks + " (id INT PRIMARY KEY, n INT) ENGINE=InnoDB");
        jdbc.execute("INSERT INTO " + locks + " VALUES (1, 0), (2, 0)");
        jdbc.execute("CREATE TABLE " + heavy + " (id INT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB");
    }

    /** In the fenced body: takes row 1, then asks for row 2 and loses the deadlock; the error's text, or null. */
    String lose() {
        jdbc.update("UPDATE " + locks + " SET n = n + 1 WHERE id = 1");
        bodyHasOne.countDown();
        await(heavierHasTwo);
        sleep(700); // the heavier transaction now waits for row 1
        try {
            jdbc.update("UPDATE " + locks + " SET n = n + 1 WHERE id = 2");
            return null;
        } catch (DataAccessException e) {
            return e.getClass().getSimpleName() + ": " + e.getMostSpecificCause().getMessage();
        }
    }

    /** The heavier transaction, on a thread of its own, once the body holds row 1; its outcome. */
    CompletableFuture<String> heavier(PlatformTransactionManager tm) {
        return CompletableFuture.supplyAsync(() -> {
            await(bodyHasOne);
            try {
                new TransactionTemplate(tm).executeWithoutResult(s -> {
                    for (int i = 0; i < 50; i++) {
                        jdbc.update("INSERT INTO " + heavy + " (v) SELECT seq FROM seq_1_to_100");
                    }
                    jdbc.update("UPDATE " + locks + " SET n = n + 1 WHERE id = 2");
                    heavierHasTwo.countDown();
                    jdbc.update("UPDATE " + locks + " SET n = n + 1 WHERE id = 1");
                });
                return "ok";
            } catch (RuntimeException e) {
                return e.getClass().getSimpleName();
            } finally {
                heavierHasTwo.countDown();
            }
        }, x -> new Thread(x).start());
    }

    static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(30, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }
}
