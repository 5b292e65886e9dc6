package dev.fencing.issuer;

import dev.fencing.token.FencingToken;

import java.time.Duration;
import java.util.Map;

/**
 * The lock-service SPI: acquire a lock on a resource and get a fencing token strictly larger than any token
 * issued for that resource before, also across restarts of the lock service; release it afterwards.
 * Implementations derive tokens from a durable, ordered source (ZooKeeper czxid, etcd revision, a database
 * sequence), never from a clock, a UUID or a counter that resets.
 *
 * <p>A lease releases itself ({@link Lease#close()}); implementations extend {@link AbstractTokenIssuer}, which
 * counts, wraps and makes release safe in one place.
 */
public interface TokenIssuer {

    /**
     * Acquires the lock on {@code resource}, waiting at most {@code timeout}. Every resource a
     * {@link FencingToken} accepts (up to {@link FencingToken#MAX_PART_LENGTH} UTF-16 chars, any Unicode) can be
     * locked. A failure after the lock service granted the lock (reading the token, building the lease, an
     * interrupt) releases the lock again before the exception is thrown: a failed acquire never leaves a lock held.
     *
     * @throws IllegalArgumentException when the resource or timeout is invalid (see {@link #checkAcquire}); nothing
     *                                  was locked
     * @throws LockAcquisitionException when the lock is not obtained in time or the service cannot be reached
     */
    Lease acquire(String resource, Duration timeout);

    /**
     * Releases a lease obtained from this issuer: {@code lease.close()}.
     *
     * @deprecated a lease releases itself: call {@link Lease#close()} (or acquire in a try-with-resources block)
     */
    @Deprecated(since = "1.0", forRemoval = true)
    default void release(Lease lease) {
        lease.close();
    }

    /**
     * Asks the lock service, now, whether it can hand out locks: for health checks. Takes no lock, caches nothing,
     * and returns within a few seconds; throws a {@link RuntimeException} whose message names the service and why it
     * cannot. The default does nothing (an issuer without a remote service, such as {@link InMemoryTokenIssuer}).
     */
    default void probe() {
    }

    /**
     * What an operator should see of this issuer's configuration on {@code /actuator/fencing} and the health
     * details, beside its type: where its lock service is, its key prefix, its lease time. Never secrets. The default
     * says nothing more.
     */
    default Map<String, Object> describe() {
        return Map.of();
    }

    /**
     * The argument check every implementation makes before contacting its lock service: the resource must be one a
     * {@link FencingToken} accepts (not blank, at most {@link FencingToken#MAX_PART_LENGTH} chars, no control
     * characters), so that no lock is ever taken for a resource whose token could not be built.
     *
     * @throws IllegalArgumentException naming the argument (and the resource) that is wrong
     */
    static void checkAcquire(String resource, Duration timeout) {
        if (resource == null || resource.isBlank()) {
            throw new IllegalArgumentException("resource must not be blank");
        }
        if (resource.length() > FencingToken.MAX_PART_LENGTH) {
            throw new IllegalArgumentException("resource '" + resource.substring(0, 64) + "...' is " + resource.length()
                    + " chars long, longer than the " + FencingToken.MAX_PART_LENGTH
                    + " a fencing token allows (FencingToken.MAX_PART_LENGTH)");
        }
        try {
            new FencingToken(resource, 1, "-"); // the token's own rules, in one place
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("resource '" + resource + "' cannot be locked: " + e.getMessage(), e);
        }
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout for resource '" + resource
                    + "' must not be negative, was " + timeout);
        }
    }
}
