package dev.fencing.issuer;

import dev.fencing.recovery.IssuedTokens;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.retention.ResourceFamily;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;

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
 *
 * <p>Counts in the same {@code fencing.issuer.*} counters as the other issuers, tagged {@code issuer=memory}; a lease
 * is counted lost when another acquirer takes over its expired lock, or when its release finds it expired. As
 * {@link IssuedTokens}, its per-resource counter is the exact highest issued token.
 *
 * <p>As {@link IssuerFloors}: a resource with a family ({@link ResourceFamily}) is issued {@code max(its counter,
 * its family's floor) + 1}, so a fence store that folded the family into a floor keeps accepting its tokens.
 */
public final class InMemoryTokenIssuer extends AbstractTokenIssuer<InMemoryTokenIssuer.MemoryLease>
        implements IssuedTokens, IssuerFloors {

    private final Duration leaseTtl;
    private final long lastIssued;
    private final LongSupplier nanoClock;
    private final String instance = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xFFFFFFFFFFL);
    private final ConcurrentHashMap<String, Lock> locks = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Long> floors = new ConcurrentHashMap<>();

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
        this(leaseTtl, lastIssued, System::nanoTime, null);
    }

    /**
     * @param leaseTtl   how long a lease stays held without release
     * @param lastIssued the value before the first token of every resource (first token is {@code lastIssued + 1})
     * @param registry   for the issuer's counters ({@code issuer=memory}), or {@code null}
     */
    public InMemoryTokenIssuer(Duration leaseTtl, long lastIssued, MeterRegistry registry) {
        this(leaseTtl, lastIssued, System::nanoTime, registry);
    }

    InMemoryTokenIssuer(Duration leaseTtl, long lastIssued, LongSupplier nanoClock) {
        this(leaseTtl, lastIssued, nanoClock, null);
    }

    InMemoryTokenIssuer(Duration leaseTtl, long lastIssued, LongSupplier nanoClock, MeterRegistry registry) {
        super(registry, "memory", false); // its counters live in this JVM: they cannot go back under it
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
    protected MemoryLease doAcquire(String resource, Duration timeout, Grant grant) throws InterruptedException {
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
                            + lock.current.token().holder());
                }
                lock.released.awaitNanos(Math.min(left, lock.current.expiresAt - now));
            }
            long last = Math.max(lock.last, floorOf(resource));
            if (last == Long.MAX_VALUE) {
                throw new LockAcquisitionException(resource, "Token counter of resource '" + resource
                        + "' is exhausted");
            }
            if (lock.current != null) {
                markLost(lock.current, true); // its time ran out: taken over
            }
            long value = last + 1;
            lock.last = value;
            MemoryLease lease = new MemoryLease(this, lock,
                    new FencingToken(resource, value, "mem-" + instance + "-" + value),
                    nanoClock.getAsLong() + leaseTtl.toNanos());
            lock.current = lease;
            grant.granted(() -> free(lease)); // the lock was granted: a failure from here on frees it again
            afterGrant.accept(resource);
            return lease;
        } finally {
            lock.mutex.unlock();
        }
    }

    @Override
    protected boolean doRelease(MemoryLease lease) {
        return free(lease);
    }

    /** Frees the lock if {@code lease} still holds it; {@code false} when it had expired or was taken over. */
    private boolean free(MemoryLease lease) {
        Lock lock = lease.lock;
        lock.mutex.lock();
        try {
            if (lock.current != lease) {
                return false;
            }
            boolean expired = lease.expired();
            lock.current = null;
            lock.released.signalAll();
            return !expired;
        } finally {
            lock.mutex.unlock();
        }
    }

    private long floorOf(String resource) {
        if (floors.isEmpty()) {
            return 0;
        }
        String family = ResourceFamily.of(resource);
        Long floor = family == null ? null : floors.get(family);
        return floor == null ? 0 : floor;
    }

    /**
     * Makes every token issued from now on for a resource of {@code family} larger than {@code floor}; never lowers
     * it. An acquire already past reading the floor when this is called may still return a token at or below it.
     *
     * @throws IllegalArgumentException naming the family and floor when the family is blank or the floor negative
     */
    @Override
    public void raiseFamilyFloor(String family, long floor) {
        IssuerFloors.checkArguments("InMemoryTokenIssuer.raiseFamilyFloor", family, floor);
        floors.merge(family, floor, Math::max);
    }

    /**
     * Raises {@code resource}'s counter to at least {@code floor}, so its next token is above it; never lowers it,
     * and a lease held now keeps its token.
     *
     * @throws IllegalArgumentException when the resource cannot be locked or the floor is negative
     */
    @Override
    public void raiseResourceFloor(String resource, long floor) {
        TokenIssuer.checkAcquire(resource, Duration.ZERO);
        if (floor < 0) {
            throw new IllegalArgumentException("InMemoryTokenIssuer.raiseResourceFloor: floor of resource '" + resource
                    + "' must not be negative, was " + floor);
        }
        Lock lock = locks.computeIfAbsent(resource, r -> new Lock(lastIssued));
        lock.mutex.lock();
        try {
            lock.last = Math.max(lock.last, floor);
        } finally {
            lock.mutex.unlock();
        }
    }

    /**
     * The resource's counter: its last token, or {@code lastIssued} from the constructor when none was issued; at
     * least its family's floor when the resource has no counter yet.
     */
    @Override
    public long highestIssued(String resource) {
        Lock lock = locks.get(resource);
        if (lock == null) {
            return Math.max(lastIssued, floorOf(resource));
        }
        lock.mutex.lock();
        try {
            return lock.last;
        } finally {
            lock.mutex.unlock();
        }
    }

    @Override
    public boolean isHeld(String resource) {
        Lock lock = locks.get(resource);
        MemoryLease current = lock == null ? null : lock.current;
        return current != null && !current.expired();
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

    /** A lease of this issuer: lost once its time-to-live has passed or another acquirer took its lock over. */
    static final class MemoryLease extends AbstractLease {
        final Lock lock;
        final long expiresAt;
        private final LongSupplier nanoClock;

        MemoryLease(InMemoryTokenIssuer issuer, Lock lock, FencingToken token, long expiresAt) {
            super(issuer, token);
            this.lock = lock;
            this.expiresAt = expiresAt;
            this.nanoClock = issuer.nanoClock;
        }

        boolean expired() {
            return nanoClock.getAsLong() - expiresAt >= 0;
        }

        @Override
        public boolean isLost() {
            return super.isLost() || (!isReleased() && (expired() || lock.current != this));
        }
    }
}
