package dev.fencing.reactive;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Scheduler;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A blocking {@link TokenIssuer} run on a scheduler that may block ({@link ReactiveTokenIssuer#fromBlocking}). Each
 * acquisition is one task; the subscriber and the task agree through one state change who owns the lease: if the
 * subscriber cancelled first, the task releases the lease it gets.
 */
final class BlockingIssuerAdapter implements ReactiveTokenIssuer {

    private static final Object CANCELLED = new Object();

    private final TokenIssuer issuer;
    private final Scheduler scheduler;

    BlockingIssuerAdapter(TokenIssuer issuer, Scheduler scheduler) {
        this.issuer = Objects.requireNonNull(issuer, "issuer");
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    }

    /** The blocking issuer it adapts. */
    TokenIssuer issuer() {
        return issuer;
    }

    @Override
    public Mono<Lease> acquire(String resource, Duration timeout) {
        return Mono.create(sink -> {
            AtomicReference<Object> outcome = new AtomicReference<>();
            Disposable.Swap task = Disposables.swap();
            sink.onCancel(() -> {
                Object previous = outcome.getAndUpdate(current -> current == null ? CANCELLED : current);
                if (previous == null) {
                    task.dispose(); // interrupts a waiting acquire; a lease it still returns is released there
                } else if (previous instanceof Lease lease) {
                    // obtained but not yet delivered: the sink drops it, so it is released here, off this thread
                    scheduler.schedule(() -> closeQuietly(lease));
                }
            });
            try {
                task.update(scheduler.schedule(() -> acquire(resource, timeout, sink, outcome)));
            } catch (RuntimeException e) { // the scheduler refused the task
                if (outcome.compareAndSet(null, CANCELLED)) {
                    sink.error(e);
                }
            }
        });
    }

    private void acquire(String resource, Duration timeout, MonoSink<Lease> sink, AtomicReference<Object> outcome) {
        Lease lease;
        try {
            lease = issuer.acquire(resource, timeout);
        } catch (Throwable t) {
            if (outcome.compareAndSet(null, t)) {
                sink.error(t);
            }
            return;
        }
        if (outcome.compareAndSet(null, lease)) {
            sink.success(lease);
        } else {
            closeQuietly(lease); // the subscriber left while the lock was being taken: nobody else will release it
        }
    }

    private static void closeQuietly(Lease lease) {
        try {
            lease.close();
        } catch (RuntimeException ignored) {
            // nobody to tell: the lock service's own expiry frees it
        }
    }

    @Override
    public Mono<Void> release(Lease lease) {
        return Mono.<Void>fromRunnable(lease::close).subscribeOn(scheduler);
    }

    @Override
    public String toString() {
        return "ReactiveTokenIssuer.fromBlocking(" + issuer + ")";
    }
}
