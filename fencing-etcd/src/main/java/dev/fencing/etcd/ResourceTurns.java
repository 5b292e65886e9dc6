package dev.fencing.etcd;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * This process's turn on each resource of an {@link EtcdTokenIssuer}: a fair semaphore of one permit per resource,
 * kept only while an acquirer, a lease or a pending give-back uses it, so that per-entity resources (a key per order)
 * leave nothing behind once released. Each user {@link #enter}s once and then either {@link Turn#release}s the permit
 * it took or {@link Turn#leave}s without one, exactly once.
 */
final class ResourceTurns {

    private final ConcurrentHashMap<String, Turn> turns = new ConcurrentHashMap<>();

    /** The resource's turn, counting the caller as one more user until it releases or leaves. */
    Turn enter(String resource) {
        return turns.compute(resource, (r, turn) -> {
            Turn entered = turn != null ? turn : new Turn(r);
            entered.users++;
            return entered;
        });
    }

    /** How many resources have a turn now (for tests). */
    int size() {
        return turns.size();
    }

    /** One resource's turn. */
    final class Turn {
        private final String resource;
        private final Semaphore permit = new Semaphore(1, true);
        /** Acquirers, leases and give-backs using it; read and written only inside the map's atomic updates. */
        private int users;

        private Turn(String resource) {
            this.resource = resource;
        }

        /** Takes the permit, waiting up to {@code nanos}; {@code false} when it did not (the caller must leave). */
        boolean tryAcquire(long nanos) throws InterruptedException {
            return permit.tryAcquire(nanos, TimeUnit.NANOSECONDS);
        }

        /** Gives the permit back and leaves. */
        void release() {
            permit.release();
            leave();
        }

        /** Stops using the turn without a permit; the last user's leaving drops it. */
        void leave() {
            turns.computeIfPresent(resource, (r, turn) -> --turn.users == 0 ? null : turn);
        }
    }
}
