package dev.fencing.testsupport;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Polls a condition that another thread (a lock service's callback, a broker's delivery) makes true, every 20 ms,
 * for at most 30 seconds; a condition still false then fails the test with an {@link AssertionError}.
 */
public final class Await {

    private Await() {
    }

    /** Returns once {@code condition} holds; fails the test after 30 seconds. */
    public static void until(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within 30 s");
            }
            Thread.sleep(20);
        }
    }
}
