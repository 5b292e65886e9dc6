package dev.fencing.jdbc;

import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A transaction on another thread that ran {@code takeLocks} and stays open, holding what it locked, until closed
 * (at most 30 s): a fenced writer paused inside its transaction, for tests of what waits for it.
 */
final class HeldTransaction implements AutoCloseable {

    private final CountDownLatch release = new CountDownLatch(1);
    private final Thread holder;

    private HeldTransaction(PlatformTransactionManager tm, Runnable takeLocks) throws InterruptedException {
        CountDownLatch holding = new CountDownLatch(1);
        holder = new Thread(() -> new TransactionTemplate(tm).executeWithoutResult(status -> {
            takeLocks.run();
            holding.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        holder.setDaemon(true);
        holder.start();
        assertThat(holding.await(10, TimeUnit.SECONDS)).as("the other transaction holds its locks").isTrue();
    }

    /** Runs {@code takeLocks} in a transaction of {@code tm} on another thread, returning once it ran. */
    static HeldTransaction open(PlatformTransactionManager tm, Runnable takeLocks) throws InterruptedException {
        return new HeldTransaction(tm, takeLocks);
    }

    /** Ends the transaction (it commits) and waits for its thread. */
    @Override
    public void close() throws InterruptedException {
        release.countDown();
        holder.join(10_000);
    }
}
