package dev.fencing.verify.nemesis;

import dev.fencing.verify.history.NemesisEvent;

import java.sql.SQLException;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

/**
 * Terminates the database sessions of one client from the server side ({@link ConnectionKiller}), preferring a
 * client inside its critical section (a transaction open, its write not yet sent), else a random one. The client
 * process lives on: its pool opens new connections, and the operation hit records {@code fail} when it certainly
 * did not commit, {@code info} when it may have. The window between {@code start} and {@code stop} is the kill
 * itself.
 */
public final class KillBackendNemesis implements Nemesis {

    /** The name on the command line and in the history. */
    public static final String NAME = "kill-backend";

    private final ConnectionKiller killer;
    private final IntConsumer killed;

    /** Kills with {@code killer}; {@code killed} hears how many sessions each strike terminated. */
    public KillBackendNemesis(ConnectionKiller killer, IntConsumer killed) {
        this.killer = killer;
        this.killed = killed;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void strike(Targets targets, Random random, Consumer<NemesisEvent> record) throws InterruptedException {
        List<Target> live = List.copyOf(targets.live());
        if (live.isEmpty()) {
            return;
        }
        Target target = live.stream().filter(Target::inCriticalSection).findFirst()
                .orElse(live.get(random.nextInt(live.size())));
        record.accept(event("start", target.name()));
        try {
            killed.accept(killer.kill(target.name()));
        } catch (SQLException e) {
            throw new IllegalStateException("kill-backend: could not terminate the sessions of " + target.name()
                    + ": " + e.getMessage(), e);
        } finally {
            record.accept(event("stop", target.name()));
        }
    }
}
