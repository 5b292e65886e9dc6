package dev.fencing.reactive;

import java.util.function.BooleanSupplier;

/** Waits for something asynchronous (a release on another scheduler) to happen, failing after ten seconds. */
final class Polling {

    private Polling() {
    }

    static void until(BooleanSupplier condition) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("Condition not met within 10 s");
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
