package dev.fencing.verify.nemesis;

import dev.fencing.verify.history.NemesisEvent;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

/**
 * The zombie maker: stops a client with SIGSTOP for longer than its lease, then continues it with SIGCONT. It
 * prefers a client that said it is inside its critical section (it has read the set and not yet written it), waiting
 * up to {@code findWithin} for one, else stops a random client: a paused lock holder is what makes a zombie, and a
 * random pick hits the one holder among the clients only now and then.
 */
public final class PauseNemesis implements Nemesis {

    private final Duration min;
    private final Duration max;
    private final Duration findWithin;

    public PauseNemesis(Duration min, Duration max, Duration findWithin) {
        this.min = min;
        this.max = max;
        this.findWithin = findWithin;
    }

    @Override
    public String name() {
        return "pause";
    }

    @Override
    public void strike(Targets targets, Random random, Consumer<NemesisEvent> record) throws InterruptedException {
        Target target = pick(targets, random);
        if (target == null) {
            return;
        }
        record.accept(event("start", target.name()));
        try {
            target.pause();
            long span = max.toMillis() - min.toMillis();
            Thread.sleep(min.toMillis() + (span > 0 ? random.nextLong(span + 1) : 0));
        } finally {
            target.resume();
            record.accept(event("stop", target.name()));
        }
    }

    private Target pick(Targets targets, Random random) throws InterruptedException {
        long deadline = System.nanoTime() + findWithin.toNanos();
        do {
            for (Target t : targets.live()) {
                if (t.inCriticalSection()) {
                    return t;
                }
            }
            Thread.sleep(0, 200_000);
        } while (System.nanoTime() - deadline < 0);
        List<? extends Target> live = targets.live();
        return live.isEmpty() ? null : live.get(random.nextInt(live.size()));
    }
}
