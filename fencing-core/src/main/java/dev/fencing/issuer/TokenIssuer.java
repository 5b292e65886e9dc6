package dev.fencing.issuer;

import java.time.Duration;

/**
 * The lock-service SPI: acquire a lock on a resource and get a fencing token strictly larger than any token
 * issued for that resource before, also across restarts of the lock service; release it afterwards.
 * Implementations derive tokens from a durable, ordered source (ZooKeeper czxid, etcd revision, a database
 * sequence), never from a clock, a UUID or a counter that resets.
 */
public interface TokenIssuer {

    /**
     * Acquires the lock on {@code resource}, waiting at most {@code timeout}.
     *
     * @throws LockAcquisitionException when the lock is not obtained in time or the service cannot be reached
     */
    Lease acquire(String resource, Duration timeout);

    /** Releases a lease obtained from this issuer. Releasing a lost or already released lease does nothing. */
    void release(Lease lease);

    /**
     * The argument check every implementation makes before contacting its lock service.
     *
     * @throws IllegalArgumentException naming the argument (and the resource) that is wrong
     */
    static void checkAcquire(String resource, Duration timeout) {
        if (resource == null || resource.isBlank()) {
            throw new IllegalArgumentException("resource must not be blank");
        }
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout for resource '" + resource + "' must not be negative, was " + timeout);
        }
    }
}
