package dev.fencing.verify.client;

import java.util.concurrent.ThreadLocalRandom;

/** The random pause a client makes inside its critical section, between its read and its write. */
final class Pauses {

    private Pauses() {
    }

    /** Sleeps a uniformly random 0 to {@code maxMillis} milliseconds (0 returns at once). */
    static void sleepUpTo(long maxMillis) throws InterruptedException {
        long sleep = ThreadLocalRandom.current().nextLong(maxMillis + 1);
        if (sleep > 0) {
            Thread.sleep(sleep);
        }
    }
}
