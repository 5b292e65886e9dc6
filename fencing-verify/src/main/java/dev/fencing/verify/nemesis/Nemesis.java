package dev.fencing.verify.nemesis;

import dev.fencing.verify.history.NemesisEvent;

import java.util.Random;
import java.util.function.Consumer;

/**
 * One kind of fault. {@link #strike} injects it once, records a {@code start} and a {@code stop} event, and returns
 * when the fault has healed; interrupted, it heals the fault before returning.
 */
public interface Nemesis {

    /** The name in the history and on the command line. */
    String name();

    /** Injects the fault once and heals it. */
    void strike(Targets targets, Random random, Consumer<NemesisEvent> record) throws InterruptedException;

    /** A start or stop event of this nemesis, stamped now. */
    default NemesisEvent event(String f, String target) {
        return new NemesisEvent(f, name(), target, System.currentTimeMillis(), System.nanoTime());
    }
}
