package dev.fencing.issuer;

import dev.fencing.token.FencingToken;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * A lease-based lock service in this JVM's memory, for tests and demos: one holder per resource at a time, a lease
 * that expires after a fixed time-to-live (after which the next acquirer takes over, as a real lock service does
 * when a holder pauses), and a per-resource counter for tokens.
 *
 * <p><b>Not durable:</b> the counters live in memory and start again after a restart, so tokens repeat across
 * processes and restarts. Use a ZooKeeper, etcd or database issuer in production.
 */
public final class InMemoryTokenIssuer implements TokenIssuer {

    private final Duration leaseTtl;
    private final long lastIssued;
    private final LongSupplier nanoClock;
    private final String instance = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xFFFFFFFFFFL);
    private final ConcurrentHashMap<String, Lock> locks = new ConcurrentHashMap<>();

    /**
     * Test seam, package-private: runs with the resource right after the lock was granted and before the lease is
     * returned, so a test can inject a failure there. Does nothing unless a test in this package sets it.
     */
    volatile Consumer<String> afterGrant = resource -> { };

    /** Leases of 30 seconds, first token 1. */
    public InMemoryTokenIssuer() {
        this(Duration.ofSeconds(30), 0);
    }

    /**
     * @param leaseTtl   how long a lease stays held without release
     * @param lastIssued the value before the first token of every resource (first token is {@code lastIssued + 1})
     */
    public InMemoryTokenIssuer(Duration leaseTtl, long lastIssued) {
        this(leaseTtl, lastIssued, System::nanoTime);
    }

    InMemoryTokenIssuer(Duration leaseTtl, long lastIssued, LongSupplier nanoClock) {
        Objects.requireNonNull(leaseTtl, "leaseTtl");
        if (leaseTtl.isNegative() || leaseTtl.isZero()) {
            throw new IllegalArgumentException("leaseTtl must be positive, was " + leaseTtl);
        }
        if (lastIssued < 0) {
            throw new IllegalArgumentException("lastIssued must not be negative, was " + lastIssued);
        }
        this.leaseTtl = leaseTtl;
        this.lastIssued = lastIssued;
        this.nanoClock = nanoClock;
    }

    @Override
    public Lease acquire(String resource, Duration timeout) {
        TokenIssuer.checkAcquire(resource, timeout);
        Lock lock = locks.computeIfAbsent(resource, r -> new Lock(lastIssued));
        long deadline = nanoClock.getAsLong() + timeout.toNanos();
        lock.mutex.lock();
        try {
            while (lock.current != null && !lock.current.expired()) {
                long now = nanoClock.getAsLong();
                long left = deadline - now;
                if (left <= 0) {
                    throw new LockAcquisitionException(resource, "Timed out after " + timeout.toMillis()
                            + " ms waiting for the lock on resource '" + resource + "', held by "
                            + lock.current.token.holder());
                }
                lock.released.awaitNanos(Math.min(left, lock.current.expiresAt - now));
            }
            if (lock.last == Long.MAX_VALUE) {
                throw new LockAcquisitionException(resource, "Token counter of resource '" + resource + "' is exhausted");
            }
            long value = ++lock.last;
            MemoryLease lease = new MemoryLease(lock,
                    new FencingToken(resource, value, "mem-" + instance + "-" + value),
                    nanoClock.getAsLong() + leaseTtl.toNanos());
            lock.current = lease;
            try {
                afterGrant.accept(resource);
            } catch (RuntimeException | Error e) {
                lease.released = true; // the lock was granted but the lease is not handed out: free it again
                lock.current = null;
                lock.released.signalAll();
                if (e instanceof Error error) {
                    throw error;
                }
                throw new LockAcquisitionException(resource, "Could not lock resource '" + resource + "': " + e, e);
            }
            return lease;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockAcquisitionException(resource, "Interrupted while waiting for the lock on resource '" + resource + "'", e);
        } finally {
            lock.mutex.unlock();
        }
    }

    @Override
    public void release(Lease lease) {
        if (!(lease instanceof MemoryLease mine) || mine.issuer() != this) {
            throw new IllegalArgumentException("Lease " + lease + " was not issued by this InMemoryTokenIssuer");
        }
        Lock lock = mine.lock;
        lock.mutex.lock();
        try {
            mine.released = true;
            if (lock.current == mine) {
                lock.current = null;
                lock.released.signalAll();
            }
        } finally {
            lock.mutex.unlock();
        }
    }

    private static final class Lock {
        final ReentrantLock mutex = new ReentrantLock();
        final Condition released = mutex.newCondition();
        long last;
        volatile MemoryLease current;

        Lock(long last) {
            this.last = last;
        }
    }

    private final class MemoryLease implements Lease {
        final Lock lock;
        final FencingToken token;
        final long expiresAt;
        volatile boolean released;

        MemoryLease(Lock lock, FencingToken token, long expiresAt) {
            this.lock = lock;
            this.token = token;
            this.expiresAt = expiresAt;
        }

        InMemoryTokenIssuer issuer() {
            return InMemoryTokenIssuer.this;
        }

        boolean expired() {
            return nanoClock.getAsLong() - expiresAt >= 0;
        }

        @Override
        public FencingToken token() {
            return token;
        }

        @Override
        public boolean isLost() {
            return released || expired() || lock.current != this;
        }

        @Override
        public String toString() {
            return "Lease[" + token + (isLost() ? ", lost" : "") + "]";
        }
    }

}
