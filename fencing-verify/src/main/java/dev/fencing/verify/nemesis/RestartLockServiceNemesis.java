package dev.fencing.verify.nemesis;

import dev.fencing.verify.cluster.LockService;
import dev.fencing.verify.history.NemesisEvent;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.function.Consumer;

/**
 * Kills one member of the lock service with SIGKILL, leaves it down for a random while, then restarts it on its own
 * data directory and waits until it serves again. About half the strikes hit the leader (when one is known), the
 * others a follower; the history's {@code start} and {@code stop} events name the member ({@code zk-2},
 * {@code etcd-1}), and interrupted, it still restarts the member before returning.
 */
public final class RestartLockServiceNemesis implements Nemesis {

    /** The name on the command line and in the history. */
    public static final String NAME = "restart-lock-service";

    private final LockService service;
    private final Duration downMin;
    private final Duration downMax;

    /** Kills members of {@code service} and keeps each down between {@code downMin} and {@code downMax}. */
    public RestartLockServiceNemesis(LockService service, Duration downMin, Duration downMax) {
        this.service = Objects.requireNonNull(service, "service");
        if (downMin.isNegative() || downMax.compareTo(downMin) < 0) {
            throw new IllegalArgumentException("restart-lock-service: down time must be 0 <= min <= max, got "
                    + downMin.toMillis() + "-" + downMax.toMillis() + " ms");
        }
        this.downMin = downMin;
        this.downMax = downMax;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void strike(Targets targets, Random random, Consumer<NemesisEvent> record) throws InterruptedException {
        String member = pick(random);
        if (member == null) {
            return;
        }
        record.accept(event("start", member));
        try {
            service.kill(member);
            long span = downMax.toMillis() - downMin.toMillis();
            Thread.sleep(downMin.toMillis() + (span > 0 ? random.nextLong(span + 1) : 0));
        } finally {
            try {
                service.restart(member);
            } finally {
                record.accept(event("stop", member));
            }
        }
    }

    /** The leader about half the time, else a running follower; null when no member runs. */
    String pick(Random random) {
        List<String> running = service.members().stream().filter(service::isRunning).toList();
        if (running.isEmpty()) {
            return null;
        }
        boolean aimAtLeader = random.nextBoolean();
        String leader = service.leader();
        if (aimAtLeader && leader != null && running.contains(leader)) {
            return leader;
        }
        List<String> followers = running.stream().filter(m -> !m.equals(leader)).toList();
        List<String> from = followers.isEmpty() ? running : followers;
        return from.get(random.nextInt(from.size()));
    }
}
