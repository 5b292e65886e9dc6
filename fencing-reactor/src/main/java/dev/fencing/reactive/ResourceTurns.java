package dev.fencing.reactive;

import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One resource of the {@link InMemoryReactiveFenceStore}: its max_seen (guarded by this object's monitor) and the
 * turns of the writes to it, granted one at a time in the order they were asked for, without blocking. Granting is
 * a drain loop, so a long queue of writes that complete synchronously does not grow the stack.
 */
final class ResourceTurns {

    boolean seen;
    long maxSeen;
    String holder;

    private final ArrayDeque<Turn> waiting = new ArrayDeque<>();
    private boolean busy;
    private final AtomicInteger draining = new AtomicInteger();

    /** A turn, emitted once it is this subscriber's; cancelling the wait gives up the place in the queue. */
    Mono<Turn> take() {
        return Mono.create(sink -> {
            Turn turn = new Turn(this, sink);
            sink.onCancel(turn::cancel);
            synchronized (this) {
                waiting.add(turn);
            }
            drain();
        });
    }

    private void drain() {
        if (draining.getAndIncrement() != 0) {
            return; // the thread in the loop below will see the change
        }
        int missed = 1;
        do {
            Turn next;
            while ((next = grantNext()) != null) {
                next.deliver();
            }
            missed = draining.addAndGet(-missed);
        } while (missed != 0);
    }

    /** The next waiting turn, now granted, or {@code null} when the resource is busy or nobody waits. */
    private synchronized Turn grantNext() {
        while (!busy) {
            Turn next = waiting.poll();
            if (next == null) {
                return null;
            }
            if (next.grant()) {
                busy = true;
                return next;
            }
        }
        return null;
    }

    private void passOn() {
        synchronized (this) {
            busy = false;
        }
        drain();
    }

    private synchronized void remove(Turn turn) {
        waiting.remove(turn);
    }

    /** One write's turn on the resource. */
    static final class Turn {
        private static final int WAITING = 0;
        private static final int GRANTED = 1;
        private static final int CANCELLED = 2;
        private static final int RELEASED = 3;

        private final ResourceTurns owner;
        private final MonoSink<Turn> sink;
        private final AtomicInteger state = new AtomicInteger(WAITING);

        Turn(ResourceTurns owner, MonoSink<Turn> sink) {
            this.owner = owner;
            this.sink = sink;
        }

        boolean grant() {
            return state.compareAndSet(WAITING, GRANTED);
        }

        void deliver() {
            sink.success(this);
        }

        /** The subscriber left: a waiting turn leaves the queue; a granted one, perhaps never delivered, passes on. */
        void cancel() {
            if (state.compareAndSet(WAITING, CANCELLED)) {
                owner.remove(this);
            } else {
                release();
            }
        }

        /** Ends this turn (idempotent) and grants the next. */
        void release() {
            if (state.compareAndSet(GRANTED, RELEASED)) {
                owner.passOn();
            }
        }
    }
}
