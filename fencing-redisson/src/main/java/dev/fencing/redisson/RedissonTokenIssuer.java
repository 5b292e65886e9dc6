package dev.fencing.redisson;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.AbstractLease;
import dev.fencing.issuer.AbstractTokenIssuer;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.retention.CounterFloors;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.retention.ResourceFamily;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import org.redisson.RedissonFencedLock;
import org.redisson.api.RFencedLock;
import org.redisson.api.RFuture;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * A {@link TokenIssuer} on Redis through Redisson's {@link RFencedLock}: the token is the lock's counter, which
 * Redisson increments in the same script that takes the lock, and this library checks it at the resource (Redisson
 * leaves "token validity tracking" to the developer). Each acquisition locks under an owner id of its own, so a lease
 * is not bound to the acquiring thread: {@link dev.fencing.issuer.Lease#close()} releases it from any thread, and two
 * acquisitions in one thread never re-enter each other.
 *
 * <p><b>Lease:</b> with a {@link Builder#leaseTime lease time} Redis expires the lock after it, whatever the holder
 * does; without one Redisson's watchdog keeps renewing it ({@code lockWatchdogTimeout}, 30 s by default) until it is
 * released or renewal stops (the JVM paused, the network cut). A lease is reported lost (a WARNING once, the
 * {@code fencing.issuer.leases.lost} counter) when a periodic check finds its lock no longer this owner's, when its
 * lease time has run out, or when no check could confirm it for one watchdog timeout; see docs/issuers.md for what is
 * and is not detected.
 *
 * <p><b>Counters:</b> one key per lock name, <code>redisson_lock_token:{prefix+resource}</code>, which nobody deletes
 * (Redisson's issue 6510): deleting it, or a Redis restart without append-only persistence, starts the counter again
 * at 1; the fence store then refuses the low tokens (fail closed) until the counter passes max_seen again, which
 * {@link #raiseTokenFloor} does at once for one resource, and a floor raise with a value
 * ({@link dev.fencing.recovery.FloorRaise}: the actuator's {@code afterRestore} with {@code atLeast}) for every
 * resource of the store, through {@link CounterFloors}. A family's floor ({@link IssuerFloors}: the same raise, and
 * compaction) is a key of its own that each acquire of a resource of the family reads, so a key never locked before
 * still gets a token above it. {@link Builder#build()} refuses a Redis without {@code appendonly yes} unless told to
 * {@link PersistenceCheck#WARN warn} instead, and the running issuer reads the setting again every 10 s: a master
 * found without it refuses every acquisition (or, told to warn, is logged) until it has it again.
 *
 * <p><b>Data marker:</b> {@link Builder#build()} writes a random value to a marker key of the prefix unless one is
 * there ({@code SET NX}) and remembers the value it found. Each acquire reads the marker on the master beside its lock
 * request (one more command, sent with it), as do {@link #probe()} and the 10 s check: a marker gone or changed
 * means Redis lost data since this issuer started (a {@code FLUSHALL}, a deleted key, a restart without persistence,
 * an eviction, a failover to a replica without it), so counters may have gone back below tokens other instances
 * handed out, and this issuer refuses every acquisition from then on, and fails its probe, until it is restarted. It
 * never writes the marker again while it runs. A loss while every instance was down is not seen by it (the first to
 * start writes a new marker), nor, in Redis Cluster, a loss on another node than the marker's; see docs/issuers.md.
 */
public final class RedissonTokenIssuer extends AbstractTokenIssuer<RedissonTokenIssuer.RedissonLease>
        implements IssuedTokens, IssuerFloors, AutoCloseable {

    /** The key prefix of all locks unless configured otherwise. */
    public static final String DEFAULT_PREFIX = "fencing:lock:";

    /** How often held leases are checked unless configured otherwise. */
    public static final Duration DEFAULT_LOSS_CHECK = Duration.ofSeconds(1);

    /** How much longer than the acquire timeout an acquire waits for Redis's answer. */
    static final Duration LOCK_ANSWER_SLACK = Duration.ofSeconds(1);

    /**
     * The largest token this issuer hands out, 2^53 - 1: Redisson's locking script returns the counter through a Lua
     * number (a double), exact only up to 2^53, so two counters above it can come back as one token. A counter above
     * it is refused at acquire, and a floor at or above it at the raise.
     */
    public static final long MAX_TOKEN = (1L << 53) - 1;

    /**
     * How often a running issuer reads the masters' persistence settings again (three {@code CONFIG GET} per master,
     * off the acquire path): a {@code CONFIG SET appendonly no}, an eviction policy changed to {@code allkeys-*}, a
     * restart with a command line or config file that lacks what a {@code CONFIG SET} had turned on, or a failover to
     * a master without them is seen within it.
     */
    static final Duration PERSISTENCE_RECHECK = Duration.ofSeconds(10);

    /** How long a release, a probe or a read waits for Redis. */
    static final Duration ANSWER_WAIT = Duration.ofSeconds(3);

    /**
     * Owner ids of acquisitions: negative, so never the id of a real thread that locks through the same Redisson
     * client with Redisson's own API (Redisson names the lock holder {@code clientId:threadId}).
     */
    private static final AtomicLong OWNERS = new AtomicLong();

    private static final System.Logger LOG = System.getLogger(RedissonTokenIssuer.class.getName());

    private final RedissonClient redisson;
    private final String prefix;
    private final long leaseMillis;             // -1: the watchdog renews
    private final long watchdogMillis;
    private final String address;
    private final Set<RedissonLease> held = ConcurrentHashMap.newKeySet();
    private final PersistenceCheck persistence;

    /**
     * What the last persistence check found wrong, under {@link PersistenceCheck#REQUIRE_APPEND_ONLY}: while set, every
     * acquisition is refused and {@link #probe()} fails; {@code null} while the masters keep the counters.
     */
    private volatile String persistenceProblem;

    /** Under {@link PersistenceCheck#WARN}: the finding last logged, so that each one is logged once. */
    private volatile String persistenceWarned;

    /** The key of this prefix's data marker. */
    private final String markerKey;

    /**
     * The value of the data marker this issuer found or wrote at start ({@link #establishMarker}); {@code null} until
     * then. Never written again while it runs.
     */
    private volatile String marker;

    /**
     * Why this issuer refuses every acquisition until a restart: Redis lost its data marker (or holds another one)
     * since the issuer started; {@code null} while the marker is the one found at start. Set once, never cleared.
     */
    private volatile String dataLost;

    private final ScheduledExecutorService checker;
    private final long recheckMillis;
    final LongSupplier nanoClock;

    /**
     * Test seam, package-private: runs with the resource right after Redis granted the lock and before the lease is
     * returned, so a test can inject a failure there. Does nothing unless a test in this package sets it.
     */
    volatile Consumer<String> afterGrant = resource -> { };

    private RedissonTokenIssuer(Builder b, String address) {
        super(b.registry, "redisson");
        this.redisson = b.redisson;
        this.prefix = b.prefix;
        this.leaseMillis = b.leaseTime == null ? -1 : b.leaseTime.toMillis();
        this.watchdogMillis = redisson.getConfig().getLockWatchdogTimeout();
        this.address = address;
        this.nanoClock = System::nanoTime;
        this.persistence = b.persistence;
        this.markerKey = RedisKeys.markerKey(b.prefix);
        this.recheckMillis = b.persistenceRecheck.toMillis();
        // two threads: a persistence check waiting for a slow master does not hold up the loss check
        this.checker = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "fencing-redisson-lease-check");
            t.setDaemon(true);
            return t;
        });
        long every = b.lossCheck.toMillis();
        checker.scheduleWithFixedDelay(() -> {
            try {
                checkHeld();
            } catch (RuntimeException e) {
                // a failed round (the client shutting down) must not end the check: the next round retries
            }
        }, every, every, TimeUnit.MILLISECONDS);
        checker.scheduleWithFixedDelay(() -> {
            try {
                recheckMarker();
            } catch (RuntimeException e) {
                // as above: the next round reads it again
            }
            try {
                recheckPersistence();
            } catch (RuntimeException e) {
                // as above: the next round asks again
            }
        }, recheckMillis, recheckMillis, TimeUnit.MILLISECONDS);
    }

    /** Starts a builder for an issuer on {@code redisson}, a started client. */
    public static Builder builder(RedissonClient redisson) {
        return new Builder(redisson);
    }

    /**
     * {@inheritDoc} A resource of a family whose floor was raised ({@link #raiseFamilyFloor}) reads that floor beside
     * its lock request; a token at or below it (a key never locked since, or one whose counter is lower) is given
     * back, the lock's counter raised past the floor, and the lock taken again, so every token clears the family's
     * floor in the fence store. Every acquire reads the data marker beside its lock request too (and once more after
     * the grant when it had to wait for the lock); a marker gone or changed refuses it and every later one.
     */
    @Override
    protected RedissonLease doAcquire(String resource, Duration timeout, Grant grant) throws Exception {
        String refused = refusedNow();
        if (refused != null) {
            throw new LockAcquisitionException(resource, "No token is handed out for resource '" + resource + "': "
                    + refused, null, false);
        }
        long deadline = nanoClock.getAsLong() + timeout.toNanos();
        String expected = marker;
        if (expected == null) {
            expected = establishMarker(); // built without startup checks: the first acquire finds or writes it
        }
        String key = RedisKeys.lockKey(prefix, resource);
        RedissonFencedLock lock = fencedLock(key);
        String family = ResourceFamily.of(resource);
        while (true) {
            RFuture<String> floorRead = family == null ? null : readOnMaster(RedisKeys.familyFloorKey(prefix, family));
            long owner = OWNERS.decrementAndGet();
            long started = nanoClock.getAsLong();
            RFuture<String> markerRead = readMarker(); // sent with the lock request: no round trip more
            Long granted = lock(resource, key, lock, owner, 0, timeout, deadline); // at once, or not yet
            checkMarker(expected, markerRead, resource, granted == null ? null : lock, owner);
            if (granted == null) {
                // held: wait for it; the script that grants it runs after the read above, so read the marker again
                granted = left(deadline) <= TimeUnit.MILLISECONDS.toNanos(1) ? null : lock(resource, key, lock,
                        owner, TimeUnit.NANOSECONDS.toMillis(left(deadline)), timeout, deadline);
                if (granted == null) {
                    throw new LockAcquisitionException(resource, "Timed out after " + timeout.toMillis()
                            + " ms waiting for the Redisson lock on resource '" + resource + "' (key '" + key
                            + "' on " + address + ")");
                }
                checkMarker(expected, readMarker(), resource, lock, owner);
            }
            long token = granted;
            long floor;
            try {
                String read = floorRead == null ? null : answer(floorRead, resource);
                floor = read == null ? 0 : Long.parseLong(read);
            } catch (RuntimeException e) {
                unlock(lock, owner);
                throw new LockAcquisitionException(resource, "Could not read the token floor of the family of "
                        + "resource '" + resource + "' on Redis at " + address + "; the lock was given back: "
                        + e.getMessage(), e);
            }
            if (token > MAX_TOKEN) { // 2^53 may be the counter 2^53 + 1 rounded; every token above it is rounded
                unlock(lock, owner);
                throw new LockAcquisitionException(resource, "The token counter of resource '" + resource
                        + "' on Redis at " + address + " is at " + token + ", above " + MAX_TOKEN + " (2^53 - 1)"
                        + ": Redisson's locking script returns it as a Lua number (a double), which cannot tell two "
                        + "counters above 2^53 apart, so no token is handed out (fail closed); the lock was given "
                        + "back. Move this resource to another issuer, or under new names with the fence rows of the "
                        + "old ones retired", null, false);
            }
            if (token > floor) {
                grant.granted(() -> unlock(lock, owner));
                afterGrant.accept(resource);
                RedissonLease lease = new RedissonLease(new FencingToken(resource, token, holder(owner)), lock, owner,
                        started);
                held.add(lease);
                return lease;
            }
            // the family's floor is above this lock's counter: raise the counter past it, take the lock again
            unlock(lock, owner);
            if (lock.getRawName().equals(key)) {
                raiseTokenFloor(resource, floor);
            } // else a NameMapper: the counter cannot be set from here, each retake below counts it up by one
            if (left(deadline) <= TimeUnit.MILLISECONDS.toNanos(1)) {
                throw new LockAcquisitionException(resource, "Timed out after " + timeout.toMillis() + " ms raising "
                        + "the token counter of resource '" + resource + "' past its family's floor " + floor);
            }
        }
    }

    /**
     * Takes the lock for {@code owner}, waiting up to {@code waitMillis} (0: one attempt) and never past
     * {@code deadline}; the token, {@code null} when the lock is held by another, or a failure naming the resource.
     */
    private Long lock(String resource, String key, RedissonFencedLock lock, long owner, long waitMillis,
                      Duration timeout, long deadline) throws Exception {
        RFuture<Long> locking = lock.tryLockAndGetTokenAsync(Math.max(0, waitMillis), leaseMillis,
                TimeUnit.MILLISECONDS, owner);
        try {
            // Redisson bounds the wait for the lock (and answers null then); this bounds the wait for Redis itself
            // (retries, reconnects), a little later so that a lock wait ending on time is reported as such
            return locking.get(left(deadline) + LOCK_ANSWER_SLACK.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | InterruptedException e) {
            giveBackWhenGranted(locking, lock, owner);
            if (e instanceof InterruptedException) {
                throw e;
            }
            throw new LockAcquisitionException(resource, "Redis at " + address + " did not answer within "
                    + (timeout.toMillis() + LOCK_ANSWER_SLACK.toMillis()) + " ms while locking resource '" + resource
                    + "' (key '" + key + "')", e);
        } catch (ExecutionException e) {
            giveBackIfGranted(lock, owner); // a request that timed out may still run on Redis and take the lock
            throw new LockAcquisitionException(resource, "Could not lock resource '" + resource + "' on Redis at "
                    + address + " (should Redis still run the request, the lock is given back): " + e.getCause(),
                    e.getCause());
        }
    }

    /**
     * Reads the data marker on the master that holds it, where the lock script runs: a script in
     * {@code READ_WRITE} mode, because Redisson sends a plain GET to a replica by default ({@code ReadMode.SLAVE} in
     * master-slave, sentinel and cluster setups), and a replica that lags or has not synced after a restart would
     * answer that the marker is gone. Keys pass the client's NameMapper as a bucket's do.
     */
    private RFuture<String> readMarker() {
        return readOnMaster(markerKey);
    }

    /**
     * A GET of {@code key} on the master that holds it ({@link #readMarker}'s reasons): the data marker, and a
     * family's floor, which a replica lagging behind a raise would answer lower.
     */
    private RFuture<String> readOnMaster(String key) {
        return redisson.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE, READ_ON_MASTER,
                RScript.ReturnType.VALUE, List.of(key));
    }

    /** A key's value, or nil; run as a script so that it goes to the master. */
    private static final String READ_ON_MASTER = "return redis.call('get', KEYS[1])";

    /** Writes {@code ARGV[1]} unless the marker is there ({@code SET NX}), and answers the marker now: one step. */
    private static final String FIND_OR_WRITE_MARKER = "redis.call('set', KEYS[1], ARGV[1], 'NX'); "
            + "return redis.call('get', KEYS[1])";

    /**
     * Finds the data marker, writing a new one when there is none ({@code SET NX} and a read, in one script on the
     * master), and remembers its value: once per issuer, at {@link Builder#build()} (or the first acquire of an
     * issuer built without startup checks). Never writes over a marker that is there.
     *
     * @throws IllegalStateException when Redis does not answer, or the marker is gone again right after the write
     */
    synchronized String establishMarker() {
        String known = marker;
        if (known != null) {
            return known;
        }
        String mine = UUID.randomUUID() + " written " + Instant.now() + " by Redisson client " + redisson.getId();
        String found = answer(redisson.getScript(StringCodec.INSTANCE).<String>evalAsync(RScript.Mode.READ_WRITE,
                FIND_OR_WRITE_MARKER, RScript.ReturnType.VALUE, List.of(markerKey), mine), null);
        if (found == null) {
            throw new IllegalStateException("Redis at " + address + " lost the fencing data marker '"
                    + RedisKeys.shown(markerKey) + "' (key prefix '" + prefix + "') right after it was written "
                    + "(a FLUSHALL, FLUSHDB or DEL meanwhile, or an eviction): no token is handed out on data that "
                    + "is being lost; find out who deletes keys, then try again");
        }
        marker = found;
        return found;
    }

    /**
     * Checks a read of the data marker against the value found at start; on a failed read or another value gives
     * the lock back ({@code lock} not {@code null}: it was granted) and throws, refusing (for a lost marker) this and
     * every later acquisition.
     */
    private void checkMarker(String expected, RFuture<String> read, String resource, RFencedLock lock, long owner)
            throws Exception {
        String found;
        try {
            found = answer(read, resource);
        } catch (RuntimeException e) {
            if (lock != null) {
                unlock(lock, owner);
            }
            throw new LockAcquisitionException(resource, "Could not read the fencing data marker '"
                    + RedisKeys.shown(markerKey) + "' on Redis at " + address + " for resource '" + resource + "'"
                    + (lock == null ? "" : "; the lock was given back") + ": " + e.getMessage(), e);
        }
        if (expected.equals(found)) {
            return;
        }
        String why = markerLost(expected, found);
        if (lock != null) {
            unlock(lock, owner);
        }
        throw new LockAcquisitionException(resource, "No token is handed out for resource '" + resource + "'"
                + (lock == null ? "" : " (the lock was given back)") + ": " + why, null, false);
    }

    /**
     * Records that the data marker is gone ({@code found} {@code null}) or holds another value than
     * {@code expected}: from now on every acquisition is refused and {@link #probe()} fails, until a restart. Logs
     * it once (WARNING); answers the reason, the first one found.
     */
    private String markerLost(String expected, String found) {
        String why = "Redis at " + address + " lost data since this issuer started: the fencing data marker '"
                + RedisKeys.shown(markerKey) + "' (key prefix '" + prefix + "') "
                + (found == null ? "is gone" : "holds '" + found + "', not '" + expected + "'")
                + ", which this issuer found or wrote at start (a FLUSHALL or FLUSHDB, a deleted key, a restart "
                + "without persistence, an eviction, or a failover to a replica that had not received it). Token "
                + "counters may have gone back with it below tokens that other instances handed out and whose "
                + "holders may still write, so this issuer hands out no token (fail closed, not retryable) until it "
                + "is restarted. What to do (docs/operations.md, \"Redis lost the data marker\"): raise the "
                + "counters with the floor raise, atLeast the fence store's highest max_seen plus a margin above "
                + "the tokens handed out before the loss (POST /actuator/fencing {\"afterRestore\": true, "
                + "\"atLeast\": N}), then restart every instance on this Redis and prefix (the first to start "
                + "writes a new marker)";
        synchronized (this) {
            if (dataLost != null) {
                return dataLost;
            }
            dataLost = why;
        }
        LOG.log(System.Logger.Level.WARNING, why);
        return why;
    }

    /**
     * One round of the marker check of a running issuer (every 10 s, with the persistence check): the marker read
     * again, so that a loss is found (and the probe fails) without an acquire. A read that fails changes nothing.
     */
    void recheckMarker() {
        String expected = marker;
        if (expected == null || dataLost != null) {
            return;
        }
        String found = answer(readMarker(), null);
        if (!expected.equals(found)) {
            markerLost(expected, found);
        }
    }

    /** The holder of a token: the Redisson client's id and the acquisition's owner number, unique per acquisition. */
    private String holder(long owner) {
        return redisson.getId() + ":" + -owner;
    }

    /**
     * The lock request of an acquirer that gave up may still be granted: cancelled, Redisson unlocks a lock it
     * grants afterwards; and should it complete with a token all the same, the lock is given back then.
     */
    private void giveBackWhenGranted(RFuture<Long> locking, RFencedLock lock, long owner) {
        locking.cancel(false);
        locking.whenComplete((late, error) -> {
            if (late != null) {
                lock.unlockAsync(owner);
            } else if (error != null) {
                giveBackIfGranted(lock, owner);
            }
        });
    }

    /**
     * A lock request that failed without Redis's answer (Redisson's response timeout: Redis busy, paused, or slow
     * to reply) may have run, or may still run, and taken the lock for {@code owner}, which nobody would release
     * before its TTL (the watchdog timeout or the lease time). So the owner's lock is unlocked now and once more
     * after {@link #ANSWER_WAIT}; an owner id is never reused, so neither unlocks another acquisition's lock.
     */
    private void giveBackIfGranted(RFencedLock lock, long owner) {
        lock.unlockAsync(owner);
        try {
            checker.schedule(() -> lock.unlockAsync(owner), ANSWER_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            // the issuer is closed: the lock goes with its TTL
        }
    }

    @Override
    protected boolean doRelease(RedissonLease lease) throws Exception {
        held.remove(lease);
        try {
            unlock(lease.lock, lease.owner);
            return true;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IllegalMonitorStateException) {
                return false; // the lock expired, or another owner holds it now
            }
            throw e;
        }
    }

    /** Unlocks, waiting up to {@link #ANSWER_WAIT}, also on an interrupted thread (the interrupt is kept). */
    private static void unlock(RFencedLock lock, long owner) throws ExecutionException, TimeoutException {
        boolean interrupted = Thread.interrupted();
        CompletableFuture<Void> unlocking = lock.unlockAsync(owner).toCompletableFuture();
        try {
            while (true) {
                try {
                    unlocking.get(ANSWER_WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    return;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    protected LockAcquisitionException failure(String resource, Duration timeout, Exception e) {
        return new LockAcquisitionException(resource, "Could not lock resource '" + resource + "' on Redis at "
                + address + ": " + e, e);
    }

    /**
     * One round of the loss check: each held lease whose lease time has run out, whose lock Redis no longer holds for
     * its owner, or that no check confirmed for a watchdog timeout is marked lost and counted (a WARNING once).
     */
    void checkHeld() {
        long asked = nanoClock.getAsLong();
        Map<RedissonLease, CompletableFuture<Boolean>> answers = new HashMap<>();
        for (RedissonLease lease : held) {        // every question first, then the answers: one round trip
            if (lease.expired(asked)) {
                lost(lease);
            } else {
                answers.put(lease, lease.lock.isHeldByThreadAsync(lease.owner).toCompletableFuture());
            }
        }
        long deadline = asked + ANSWER_WAIT.toNanos();
        for (Map.Entry<RedissonLease, CompletableFuture<Boolean>> answer : answers.entrySet()) {
            RedissonLease lease = answer.getKey();
            Boolean mine = null;
            try {
                mine = answer.getValue().get(left(deadline), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException | TimeoutException | RuntimeException unanswered) {
                // no verdict from Redis; the watchdog bound below decides
            }
            if (Boolean.FALSE.equals(mine)) {
                lost(lease);                      // no-op for a lease released meanwhile
            } else if (Boolean.TRUE.equals(mine)) {
                lease.confirmedAt = asked;
            } else if (asked - lease.confirmedAt >= TimeUnit.MILLISECONDS.toNanos(watchdogMillis)) {
                lost(lease);                      // Redis may have let it expire: renewal cannot have reached it
            }
        }
    }

    private void lost(RedissonLease lease) {
        held.remove(lease);
        markLost(lease, true);
    }

    /**
     * Raises the counter of {@code resource} to at least {@code floor} (never lowers it) and returns its value now:
     * the way back after a Redis restart or flush reset the counter. Pass the fence store's max_seen for the resource
     * (for example {@code JdbcFenceAdmin.maxSeen}); the next token is then above it. Not for a Redisson client with a
     * {@code NameMapper} (the counter key is computed here): refused there.
     *
     * @throws IllegalArgumentException when the resource is invalid, or {@code floor} is negative or not below
     *                                  {@link #MAX_TOKEN}
     * @throws IllegalStateException    when the Redisson client maps object names (a {@code NameMapper}): the raise
     *                                  would set another key than Redisson's counter
     */
    public long raiseTokenFloor(String resource, long floor) {
        TokenIssuer.checkAcquire(resource, Duration.ZERO);
        if (floor < 0) {
            throw new IllegalArgumentException("floor for resource '" + resource + "' must not be negative, was "
                    + floor);
        }
        checkBelowMaxToken("floor for resource '" + resource + "'", floor);
        String lockKey = RedisKeys.lockKey(prefix, resource);
        String mapped = fencedLock(lockKey).getRawName();
        if (!mapped.equals(lockKey)) {
            // the script's key would be mapped again, Redisson's counter key is built around the mapped name
            throw new IllegalStateException("Cannot raise the token counter of resource '" + resource + "' to "
                    + floor + ": the Redisson client maps object names (a NameMapper: '" + lockKey + "' is '"
                    + mapped + "' in Redis), and raiseTokenFloor would set another key than Redisson's counter "
                    + "'" + RedisKeys.tokenKey(mapped) + "'. Raise it by hand (redis-cli SET, never lower), or use a "
                    + "Redisson client without a NameMapper for this issuer");
        }
        String tokenKey = RedisKeys.tokenKey(lockKey);
        Long now = redisson.getScript(StringCodec.INSTANCE).eval(RScript.Mode.READ_WRITE, RAISE_TO_AT_LEAST,
                RScript.ReturnType.INTEGER, List.of(tokenKey), Long.toString(floor));
        return now;
    }

    /**
     * Makes every token issued from now on for a resource of {@code family} larger than {@code floor}: kept in Redis
     * (key {@code prefix + family + U+001F}, raised, never lowered), read beside each lock request of a resource of
     * the family, whose counter is raised past it when it is not above it yet (one read more per acquire of a keyed
     * resource). For the floor raise after a restore and for compaction.
     *
     * @throws IllegalArgumentException when {@code family} is blank, or {@code floor} is negative or not below
     *                                  {@link #MAX_TOKEN}
     */
    @Override
    public void raiseFamilyFloor(String family, long floor) {
        IssuerFloors.checkArguments("RedissonTokenIssuer.raiseFamilyFloor", family, floor);
        checkBelowMaxToken("RedissonTokenIssuer.raiseFamilyFloor: floor of family '" + family + "'", floor);
        redisson.getScript(StringCodec.INSTANCE).eval(RScript.Mode.READ_WRITE, RAISE_TO_AT_LEAST,
                RScript.ReturnType.INTEGER, List.of(RedisKeys.familyFloorKey(prefix, family)), Long.toString(floor));
    }

    /** Refuses a floor whose next token would be above {@link #MAX_TOKEN}: Redisson cannot return it exactly. */
    private static void checkBelowMaxToken(String what, long floor) {
        if (floor >= MAX_TOKEN) {
            throw new IllegalArgumentException(what + " is " + floor + "; Redisson hands out tokens up to "
                    + MAX_TOKEN + " (2^53 - 1) only (its locking script returns the counter as a Lua number, a "
                    + "double), so the floor must be below " + MAX_TOKEN);
        }
    }

    /**
     * Sets the counter in {@code KEYS[1]} to {@code ARGV[1]} unless it is at least that; answers the value now. The
     * two are compared as decimal strings (shorter is smaller, then by text), not as Lua numbers, which are doubles
     * and cannot tell counters above 2^53 apart; {@code INCRBY 0} answers the value as Redis's 64-bit integer. A
     * counter someone set negative is below every floor.
     */
    private static final String RAISE_TO_AT_LEAST = "local c = redis.call('get', KEYS[1]) or '0'; local f = ARGV[1]; "
            + "if string.sub(c, 1, 1) == '-' or #c < #f or (#c == #f and c < f) then "
            + "redis.call('set', KEYS[1], f); end; return redis.call('incrby', KEYS[1], 0);";

    /** {@link #raiseTokenFloor}, for a {@link dev.fencing.recovery.FloorRaise} with a value to raise to. */
    @Override
    public void raiseResourceFloor(String resource, long floor) {
        raiseTokenFloor(resource, floor);
    }

    /**
     * Names the Redis server and the counter raise that repairs it (docs/operations.md). The refused acquisition's
     * locking script counted the counter up all the same, so acquisitions succeed again by themselves once it passes
     * {@code issuedBefore}: after at most {@code issuedBefore - token} more refusals (fewer when other instances lock
     * the resource too), with tokens that the fence store refuses while they are at or below its max_seen. The message
     * says so; the raise ends both at once.
     */
    @Override
    protected LockAcquisitionException wentBack(String resource, long token, long issuedBefore) {
        return new LockAcquisitionException(resource, "The token counter of resource '" + resource + "' on Redis at "
                + address + " went back: it handed out " + token + ", yet this issuer handed out " + issuedBefore
                + " for it before (a FLUSHALL or deleted token key, a restart without append-only persistence, a "
                + "failover to a replica that missed increments). A holder of a token up to " + issuedBefore + " may "
                + "still write, so none up to it is handed out (fail closed); the lock was given back. Each refused "
                + "acquire still counts the counter up, so acquisitions succeed again by themselves after at most "
                + (issuedBefore - token) + " more, and the fence store then refuses their tokens as stale (or "
                + "duplicate) until the counter passes its max_seen for the resource. Raise the counter above both: "
                + "issuer.raiseTokenFloor(resource, max(" + issuedBefore + ", maxSeen)), or the floor raise with "
                + "atLeast the store's highest max_seen for every resource (docs/operations.md, \"Backup and restore "
                + "of the fence table\")", null, false);
    }

    /** The counter of {@code resource} now: the highest token issued for it (0 when none was). */
    @Override
    public long highestIssued(String resource) {
        long here = issuedHere(resource); // never below what this issuer handed out itself
        Long token = answer(fencedLock(RedisKeys.lockKey(prefix, resource)).getTokenAsync(), resource);
        return Math.max(here, token == null ? 0 : token);
    }

    /** Whether the lock key of {@code resource} exists now (held, by anyone). */
    @Override
    public boolean isHeld(String resource) {
        return Boolean.TRUE.equals(answer(fencedLock(RedisKeys.lockKey(prefix, resource)).isLockedAsync(), resource));
    }

    /**
     * Fails unless Redis answers a read of the data marker within {@link #ANSWER_WAIT}; from then on for good (until
     * a restart) when the marker is gone or holds another value than at start (Redis lost data: every acquisition is
     * refused too); and (with {@link PersistenceCheck#REQUIRE_APPEND_ONLY}) while the last periodic persistence check
     * found a master that may not keep the counters (its verdict, no extra request).
     *
     * @throws IllegalStateException naming the Redis address and what went wrong
     */
    @Override
    public void probe() {
        String refused = refusedNow();
        if (refused != null) {
            throw new IllegalStateException(refused);
        }
        String expected = marker;
        String found = answer(readMarker(), null);
        if (expected != null && !expected.equals(found)) {
            throw new IllegalStateException(markerLost(expected, found));
        }
    }

    /**
     * One round of the persistence check of a running issuer: the masters' {@code appendonly} and
     * {@code maxmemory-policy} read again. Under {@link PersistenceCheck#REQUIRE_APPEND_ONLY} a problem refuses every
     * acquisition (and fails {@link #probe()}) until a round finds none; under {@link PersistenceCheck#WARN} it is
     * logged, once per finding. A master that could not be reached changes nothing: its outage fails the acquisitions
     * by itself, and the next round asks again.
     */
    void recheckPersistence() {
        RedisPersistence.Finding finding = RedisPersistence.check(redisson);
        if (!finding.problems().isEmpty()) {
            String found = finding.describe();
            if (persistence == PersistenceCheck.REQUIRE_APPEND_ONLY) {
                String before = persistenceProblem;
                persistenceProblem = found;
                if (!found.equals(before)) {
                    LOG.log(System.Logger.Level.WARNING, refusal(found));
                }
            } else if (!found.equals(persistenceWarned)) {
                persistenceWarned = found;
                LOG.log(System.Logger.Level.WARNING, "Redis at " + address + " may no longer keep the fencing token "
                        + "counters (" + found + "): a restart, flush or eviction starts a counter again at 1, and the "
                        + "fence refuses every lower token until the counter passes max_seen (persistenceCheck WARN: "
                        + "tokens are still handed out; raiseTokenFloor(resource, maxSeen) repairs a resource)");
            }
        } else if (finding.unreached().isEmpty()) {
            if (persistenceProblem != null) {
                persistenceProblem = null;
                LOG.log(System.Logger.Level.WARNING, "Redis at " + address + " keeps the fencing token counters again "
                        + "(appendonly yes, no allkeys-* eviction policy on every master)" + (dataLost == null
                        ? ": tokens are handed out again. Counters a restart or eviction reset meanwhile are refused "
                        + "as stale by the fence until raised (raiseTokenFloor, or the floor raise)"
                        : ", but this issuer still hands out no token: its data marker was lost (until a restart)"));
            }
            persistenceWarned = null;
        }
    }

    /**
     * Why every acquisition is refused now, or {@code null}: the data marker lost (until a restart), a master found
     * without persistence (until a check finds it again), or both.
     */
    private String refusedNow() {
        String lost = dataLost;
        String volatileCounters = persistenceProblem;
        if (volatileCounters == null) {
            return lost;
        }
        return lost == null ? refusal(volatileCounters) : lost + ". Besides, " + refusal(volatileCounters);
    }

    /** Why acquisitions are refused while {@code found} stands (fail closed), and what to do. */
    private String refusal(String found) {
        return "Redis at " + address + " may no longer keep the fencing token counters (" + found + "), found by the "
                + "issuer's persistence check while running: a restart, flush or eviction would start a counter "
                + "again at 1, so no token is handed out (persistenceCheck REQUIRE_APPEND_ONLY, fail closed) until a "
                + "check (every " + recheckSeconds() + ") finds appendonly yes and no allkeys-* eviction policy on "
                + "every master again. Turn it on for good (CONFIG SET appendonly yes and CONFIG REWRITE, or the "
                + "config file, so that a restart keeps it), or accept the outage with "
                + "RedissonTokenIssuer.builder(...).persistenceCheck(PersistenceCheck.WARN)";
    }

    private String recheckSeconds() {
        return recheckMillis % 1000 == 0 ? recheckMillis / 1000 + " s" : recheckMillis + " ms";
    }

    private <T> T answer(RFuture<T> request, String resource) {
        String what = resource == null ? "a read" : "a read for resource '" + resource + "'";
        try {
            return request.toCompletableFuture().get(ANSWER_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            request.cancel(false);
            throw new IllegalStateException("Redis at " + address + " did not answer " + what + " within "
                    + ANSWER_WAIT.toMillis() + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting for Redis at " + address, e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("Redis at " + address + " did not answer " + what + ": " + e.getCause(),
                    e.getCause());
        }
    }

    private RedissonFencedLock fencedLock(String key) {
        return (RedissonFencedLock) redisson.getFencedLock(key);
    }

    /** The Redis addresses this issuer names in its messages. */
    String address() {
        return address;
    }

    /**
     * Stops the loss check; the Redisson client stays open (it is the caller's). Leases still held keep their locks
     * until released or expired.
     */
    @Override
    public void close() {
        checker.shutdownNow();
    }

    private long left(long deadline) {
        return Math.max(1, deadline - nanoClock.getAsLong());
    }

    /**
     * How {@link Builder#build()}, and the running issuer's periodic check (every 10 s), treat a Redis whose counters
     * would not survive a restart or memory pressure.
     */
    public enum PersistenceCheck {
        /**
         * Refuse to build unless every master has {@code appendonly yes} and a {@code maxmemory-policy} that keeps
         * keys without a TTL (not {@code allkeys-*}), and can be asked; while running, refuse every acquisition (not
         * retryable, naming the setting and the master) and fail {@link RedissonTokenIssuer#probe()} from the check
         * that finds a master without them until one finds them again (a master that cannot be reached changes
         * nothing). The default.
         */
        REQUIRE_APPEND_ONLY,
        /**
         * Build anyway and log a WARNING saying what was found, and again for each new finding while running: for a
         * Redis whose restart you accept as an outage of the fenced resources (tokens refused until the counters pass
         * max_seen, see {@link #raiseTokenFloor}).
         */
        WARN
    }

    /**
     * Configures a {@link RedissonTokenIssuer}. Defaults: prefix {@value #DEFAULT_PREFIX}, no lease time (Redisson's
     * watchdog renews the lock), a loss check every second, persistence required, no counters.
     */
    public static final class Builder {
        private final RedissonClient redisson;
        private String prefix = DEFAULT_PREFIX;
        private Duration leaseTime;
        private Duration lossCheck = DEFAULT_LOSS_CHECK;
        private PersistenceCheck persistence = PersistenceCheck.REQUIRE_APPEND_ONLY;
        private Duration persistenceRecheck = PERSISTENCE_RECHECK;
        private MeterRegistry registry;
        private boolean startupChecks = true;

        private Builder(RedissonClient redisson) {
            this.redisson = Objects.requireNonNull(redisson, "redisson");
        }

        /** The key prefix of lock keys (no braces, no control characters, at most 200 chars). */
        public Builder prefix(String prefix) {
            try {
                this.prefix = RedisKeys.checkPrefix(prefix);
            } catch (IllegalArgumentException e) {
                throw new FencingConfigurationException(e.getMessage());
            }
            return this;
        }

        /**
         * Redis expires each lock this long after it was taken, and it is then lost; {@code null} (the default)
         * lets Redisson's watchdog renew it while this JVM runs. At least 1 ms.
         */
        public Builder leaseTime(Duration leaseTime) {
            if (leaseTime != null && leaseTime.toMillis() < 1) {
                throw new FencingConfigurationException("RedissonTokenIssuer leaseTime must be at least 1 ms, was "
                        + leaseTime);
            }
            this.leaseTime = leaseTime;
            return this;
        }

        /** How often held leases are checked for a loss; default 1 s, between 10 ms and 1 hour. */
        public Builder lossCheckInterval(Duration interval) {
            Objects.requireNonNull(interval, "interval");
            if (interval.toMillis() < 10 || interval.compareTo(Duration.ofHours(1)) > 0) {
                throw new FencingConfigurationException("RedissonTokenIssuer lossCheckInterval must be between 10 ms "
                        + "and 1 hour, was " + interval);
            }
            this.lossCheck = interval;
            return this;
        }

        /**
         * Whether a Redis without append-only persistence refuses the build (default) or only warns; the same holds
         * while the issuer runs, where a periodic check (every 10 s) reads the masters' settings again: with
         * {@link PersistenceCheck#REQUIRE_APPEND_ONLY} a master found without them refuses every acquisition and fails
         * {@link RedissonTokenIssuer#probe()} until a check finds them again; with {@link PersistenceCheck#WARN} it is
         * logged.
         */
        public Builder persistenceCheck(PersistenceCheck persistence) {
            this.persistence = Objects.requireNonNull(persistence, "persistence");
            return this;
        }

        /** Where the issuer's counters are registered; none by default. */
        public Builder meterRegistry(MeterRegistry registry) {
            this.registry = registry;
            return this;
        }

        /**
         * Checks the client, that Redis answers a read ({@link #probe()}) and its persistence ({@code CONFIG GET} on
         * every master; on every replica a failover may promote too, for a WARNING only), finds the prefix's data
         * marker or writes one ({@code SET NX} and a read in one script: the value every acquire compares from then
         * on), and builds the issuer, which reads the masters' settings and the marker again every 10 s while it runs
         * ({@link #persistenceCheck}).
         *
         * @throws FencingConfigurationException saying what to do: the client is shut down or not a plain Redisson
         *                                       client, Redis does not answer (naming its address), or (with
         *                                       {@link PersistenceCheck#REQUIRE_APPEND_ONLY}) a master has no
         *                                       {@code appendonly yes}, has an {@code allkeys-*} eviction policy,
         *                                       or could not be asked
         */
        public RedissonTokenIssuer build() {
            if (redisson.isShutdown()) {
                throw new FencingConfigurationException("RedissonTokenIssuer needs a running Redisson client; this "
                        + "one is shut down");
            }
            RFencedLock sample = redisson.getFencedLock(prefix + "fencing.config.check");
            if (!(sample instanceof RedissonFencedLock)) {
                throw new FencingConfigurationException("RedissonTokenIssuer needs RedissonClient.getFencedLock to "
                        + "return org.redisson.RedissonFencedLock (it locks under an owner id per acquisition), got "
                        + sample.getClass().getName());
            }
            String address = RedisPersistence.describe(redisson);
            RedissonTokenIssuer issuer = new RedissonTokenIssuer(this, address);
            if (!startupChecks) {
                return issuer;
            }
            try {
                issuer.probe();
                checkPersistence(issuer, address);
                issuer.establishMarker();
            } catch (RuntimeException e) {
                issuer.close();
                if (e instanceof FencingConfigurationException configuration) {
                    throw configuration;
                }
                throw new FencingConfigurationException("RedissonTokenIssuer cannot start: " + e.getMessage(), e);
            }
            return issuer;
        }

        private void checkPersistence(RedissonTokenIssuer issuer, String address) {
            RedisPersistence.Finding finding = RedisPersistence.check(redisson);
            if (!finding.durable()) {
                issuer.persistenceWarned = finding.describe(); // WARN: the running check logs what changes
                String what = "Redis at " + address + " may not keep the fencing token counters ("
                        + finding.describe() + "): a restart, flush or eviction starts a counter "
                        + "again at 1, and the fence refuses every lower token until the counter passes max_seen";
                if (persistence == PersistenceCheck.REQUIRE_APPEND_ONLY) {
                    throw new FencingConfigurationException(what + ". Turn on append-only persistence (appendonly "
                            + "yes, appendfsync always for no loss at all) with an eviction policy that keeps keys "
                            + "without a TTL (noeviction, volatile-*), or accept the outage with "
                            + "RedissonTokenIssuer.builder(...).persistenceCheck(PersistenceCheck.WARN)");
                }
                LOG.log(System.Logger.Level.WARNING, what + " (persistenceCheck WARN: starting anyway; after a "
                        + "reset, raiseTokenFloor(resource, maxSeen) repairs a resource)");
            }
            for (String note : finding.notes()) {
                LOG.log(System.Logger.Level.WARNING, "Redis at " + address + ": " + note);
            }
            for (String note : RedisPersistence.replicaNotes(redisson)) {
                LOG.log(System.Logger.Level.WARNING, "Redis at " + address + ": " + note);
            }
        }

        /** Tests only: how often the running issuer reads the persistence settings again. */
        Builder persistenceRecheck(Duration interval) {
            this.persistenceRecheck = interval;
            return this;
        }

        /** Tests only: builds without contacting Redis (for an issuer on an address where nothing listens). */
        Builder withoutStartupChecks() {
            this.startupChecks = false;
            return this;
        }
    }

    /** A lease of this issuer: its lock object, owner id, and times (nanos) for the loss check. */
    final class RedissonLease extends AbstractLease {
        final RFencedLock lock;
        final long owner;
        final long acquiredAt;
        volatile long confirmedAt;

        RedissonLease(FencingToken token, RFencedLock lock, long owner, long acquiredAt) {
            super(RedissonTokenIssuer.this, token);
            this.lock = lock;
            this.owner = owner;
            this.acquiredAt = acquiredAt;
            this.confirmedAt = acquiredAt;
        }

        /**
         * Whether its lease time has run out at {@code now}: measured from before the lock request was sent, so
         * never later than Redis's own expiry (clock rates aside). Never, without a lease time.
         */
        boolean expired(long now) {
            return leaseMillis >= 0 && now - acquiredAt >= TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        }

        /** Also lost, without asking Redis, once its lease time has run out. */
        @Override
        public boolean isLost() {
            return super.isLost() || (!isReleased() && expired(nanoClock.getAsLong()));
        }
    }
}
