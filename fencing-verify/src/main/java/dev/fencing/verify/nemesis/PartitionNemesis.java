package dev.fencing.verify.nemesis;

import dev.fencing.verify.history.NemesisEvent;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

/**
 * The other zombie maker: cuts one client off from the lock service for longer than its session or lease, then
 * heals the cut; the client keeps running and keeps reaching the store. It prefers a client that has just entered
 * its critical section (another client than the one inside when the strike began), waiting up to
 * {@code findWithin} for one, so that the cut holder has most of its critical section still ahead while its session
 * expires and the lock passes on; else it cuts a random client.
 */
public final class PartitionNemesis implements Nemesis {

    private final Duration min;
    private final Duration max;
    private final Duration findWithin;
    private final Partitions partitions;

    public PartitionNemesis(Duration min, Duration max, Duration findWithin, Partitions partitions) {
        if (min.isNegative() || max.compareTo(min) < 0) {
            throw new IllegalArgumentException("partition length must be 0 <= min <= max, got " + min + " and " + max);
        }
        this.min = min;
        this.max = max;
        this.findWithin = findWithin;
        this.partitions = partitions;
    }

    @Override
    public String name() {
        return "partition";
    }

    @Override
    public void strike(Targets targets, Random random, Consumer<NemesisEvent> record) throws InterruptedException {
        Target target = pick(targets, random);
        if (target == null || !partitions.cut(target)) {
            return;
        }
        record.accept(event("start", target.name()));
        try {
            long span = max.toMillis() - min.toMillis();
            Thread.sleep(min.toMillis() + (span > 0 ? random.nextLong(span + 1) : 0));
        } finally {
            try {
                partitions.heal(target);
            } finally {
                record.accept(event("stop", target.name()));
            }
        }
    }

    private Target pick(Targets targets, Random random) throws InterruptedException {
        Target inside = null;
        for (Target t : targets.live()) {
            if (t.inCriticalSection()) {
                inside = t;
            }
        }
        long deadline = System.nanoTime() + findWithin.toNanos();
        do {
            for (Target t : targets.live()) {
                if (t.inCriticalSection() && t != inside) {
                    return t;
                }
            }
            Thread.sleep(0, 200_000);
        } while (System.nanoTime() - deadline < 0);
        if (inside != null && inside.isAlive()) {
            return inside;
        }
        List<? extends Target> live = targets.live();
        return live.isEmpty() ? null : live.get(random.nextInt(live.size()));
    }
}
