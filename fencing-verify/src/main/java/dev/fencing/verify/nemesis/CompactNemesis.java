package dev.fencing.verify.nemesis;

import dev.fencing.verify.history.NemesisEvent;

import java.time.Duration;
import java.util.Random;
import java.util.function.Consumer;

/**
 * Compacts the run's fence table while the clients (and paused zombies) go on: each strike folds the fence rows not
 * advanced for {@code idleFor} into their family's floor ({@code JdbcFenceAdmin.compact}, through a
 * {@link Compactor}). Its target in the history is {@link #TARGET}; the window is the compaction itself. A compaction
 * refused because it could not lock the table in time (a fenced transaction held open by a paused holder) changes
 * nothing and is counted, not thrown: that is the documented behaviour, not a fault of the run.
 */
public final class CompactNemesis implements Nemesis {

    /** The name on the command line and in the history. */
    public static final String NAME = "compact";
    /** The target the events name. */
    public static final String TARGET = "fence-table";

    private final Compactor compactor;
    private final Duration idleFor;
    private final Tally tally;

    /** Compacts with {@code compactor} the rows idle for {@code idleFor}; {@code tally} hears each outcome. */
    public CompactNemesis(Compactor compactor, Duration idleFor, Tally tally) {
        this.compactor = compactor;
        this.idleFor = idleFor;
        this.tally = tally;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void strike(Targets targets, Random random, Consumer<NemesisEvent> record) {
        record.accept(event("start", TARGET));
        try {
            tally.compacted(compactor.compact(idleFor));
        } catch (RuntimeException e) {
            if (!Compactor.lockNotGranted(e)) {
                throw new IllegalStateException("compact: " + e, e);
            }
            tally.refused();
        } finally {
            record.accept(event("stop", TARGET));
        }
    }

    /** One compaction of the run's fence table. */
    @FunctionalInterface
    public interface Compactor {

        /** Folds the rows idle for {@code idleFor}; returns how many it folded. */
        long compact(Duration idleFor);

        /** Whether {@code e} says the compaction could not lock the table in time (Spring's lock exception). */
        static boolean lockNotGranted(Throwable e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t.getClass().getSimpleName().equals("CannotAcquireLockException")) {
                    return true;
                }
            }
            return false;
        }
    }

    /** What the strikes did, for the summary. */
    public interface Tally {

        /** A compaction ran and folded {@code rows} rows. */
        void compacted(long rows);

        /** A compaction could not lock the table in time and changed nothing. */
        void refused();
    }
}
