package dev.fencing.verify.nemesis;

import dev.fencing.verify.history.NemesisEvent;

import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

/**
 * Kills a random client with SIGKILL and starts a replacement, which appears in the history as a new process: the
 * killed client's operation in flight stays without completion (unknown), and its lease expires on its own.
 */
public final class KillNemesis implements Nemesis {

    @Override
    public String name() {
        return "kill";
    }

    @Override
    public void strike(Targets targets, Random random, Consumer<NemesisEvent> record) throws InterruptedException {
        List<? extends Target> live = targets.live();
        if (live.isEmpty()) {
            return;
        }
        Target target = live.get(random.nextInt(live.size()));
        record.accept(event("start", target.name()));
        try {
            targets.killAndReplace(target);
        } finally {
            record.accept(event("stop", target.name()));
        }
    }
}
