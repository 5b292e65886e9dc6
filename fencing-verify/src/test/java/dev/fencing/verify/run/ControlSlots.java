package dev.fencing.verify.run;

import java.util.concurrent.Callable;
import java.util.concurrent.Semaphore;

/**
 * At most two control runs at a time across the control classes (8 client JVMs and a lock service each, on a 2-core
 * machine): the test engine has a third thread for the short tests, which would otherwise take a third run as soon
 * as it is free. A run waits for a slot in arrival order.
 */
final class ControlSlots {

    private static final Semaphore SLOTS = new Semaphore(2, true);

    private ControlSlots() {
    }

    /** Runs {@code run} once a slot is free, and frees it after. */
    static <T> T run(Callable<T> run) throws Exception {
        SLOTS.acquire();
        try {
            return run.call();
        } finally {
            SLOTS.release();
        }
    }
}
