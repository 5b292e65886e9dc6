package dev.fencing.reactive;

import dev.fencing.issuer.Lease;
import reactor.core.publisher.Mono;

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
}
