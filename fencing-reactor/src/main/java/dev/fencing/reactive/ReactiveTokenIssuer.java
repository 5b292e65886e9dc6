package dev.fencing.reactive;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;

/**
 * The reactive form of {@link dev.fencing.issuer.TokenIssuer}: acquires a lock and its fencing token without blocking
 * the subscribing thread, and releases it the same way. Tokens obey the issuer contract (strictly increasing per
 * resource, across restarts of the lock service). A subscription cancelled while acquiring must not leak the lock:
 * a lease obtained after the cancellation is released.
 */
public interface ReactiveTokenIssuer {

    /**
     * Acquires the lock on {@code resource}, waiting at most {@code timeout}; emits the lease (whose token is bound for
     * the fenced work) or signals {@link dev.fencing.issuer.LockAcquisitionException} when the lock could not be taken.
     */
    Mono<Lease> acquire(String resource, Duration timeout);

    /** Releases {@code lease}; completes when it is released (or signals why it could not be). */
    Mono<Void> release(Lease lease);

    /**
     * {@code issuer} made reactive: its blocking acquire and release run on {@link Schedulers#boundedElastic()},
     * never on the subscribing (event-loop) thread. See {@link #fromBlocking(TokenIssuer, Scheduler)}.
     */
    static ReactiveTokenIssuer fromBlocking(TokenIssuer issuer) {
        return fromBlocking(issuer, Schedulers.boundedElastic());
    }

    /**
     * {@code issuer} made reactive: its blocking acquire and release run on {@code scheduler} (one that may block,
     * such as a bounded elastic one). A subscription cancelled while the acquire is in flight interrupts it, and a
     * lease it still obtains is released, so a cancellation never leaks a lock.
     */
    static ReactiveTokenIssuer fromBlocking(TokenIssuer issuer, Scheduler scheduler) {
        return new BlockingIssuerAdapter(issuer, scheduler);
    }

    /**
     * The blocking issuer {@code issuer} adapts ({@link #fromBlocking}), or {@code null} when it is not such an
     * adapter: for checks that must know which lock service takes the locks (the starter's startup checks).
     */
    static TokenIssuer blockingIssuerOf(ReactiveTokenIssuer issuer) {
        return issuer instanceof BlockingIssuerAdapter adapter ? adapter.issuer() : null;
    }
}
