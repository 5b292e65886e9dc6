package dev.fencing.hazelcast;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.cp.lock.FencedLock;
import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.AbstractLease;
import dev.fencing.issuer.AbstractTokenIssuer;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.SequenceWatch;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;

import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * A {@link TokenIssuer} on the Hazelcast CP Subsystem: a {@link FencedLock} per resource, whose fence
 * ({@link FencedLock#tryLockAndGetFence(long, TimeUnit)}) is the token. The fence is the Raft commit index of the
 * acquisition in the CP group, so it grows from each holder to the next for every lock of the group; the CP
 * Subsystem must run with CP members ({@code cp-member-count} at least 3): a member started in "unsafe mode" is
 * refused here, since its fences do not survive a member failure.
 *
 * <p>A {@link FencedLock} is reentrant per CP session and thread, which a lease must not be: a lease outlives the
 * acquiring thread's task (an async or reactive method, whose acquire runs on a pooled thread that goes on to other
 * work), and a later, unrelated acquire on that thread would re-enter it and get the same token. So every acquisition
 * locks as a Hazelcast thread id of its own ({@code ThreadUtil}), never a real thread's: two acquisitions never
 * re-enter each other, on one thread or not (a nested {@code @Fenced} call reuses its caller's lock in the guard,
 * without asking the issuer). The holder is the instance's UUID, that id and the fence, unique per acquisition. A
 * lease may be closed on any thread: the unlock is made as the acquisition's id.
 *
 * <p>When this process's CP session ends (it stopped heartbeating longer than the session time-to-live: a pause, a
 * partition, its member leaving), the CP group releases its locks and the next holder gets a larger fence. A
 * watcher asks the CP group, every check interval, whether each held lease is still its thread's; a lease that is
 * not is marked lost (a warning and {@code fencing.issuer.leases.lost}), and closing it is quiet.
 *
 * <p>As {@link IssuedTokens} it is {@linkplain #oneSequence() one sequence}: every fence of the CP group comes from its
 * Raft log, so the group's current fence bounds every token issued for any resource. A whole-cluster restart without
 * CP persistence starts that sequence again, below the fence store's max_seen, which the Spring Boot starter's
 * startup check then reports instead of every write being refused as stale.
 */
public final class HazelcastTokenIssuer extends AbstractTokenIssuer<HazelcastTokenIssuer.HazelcastLease>
        implements IssuedTokens, AutoCloseable {

    /** The lock name prefix unless configured otherwise. */
    public static final String DEFAULT_PREFIX = "fencing/";

    /** How often held leases are checked unless configured otherwise. */
    public static final Duration DEFAULT_CHECK_INTERVAL = Duration.ofSeconds(1);

    /** How long {@link #probe()} waits for the CP group. */
    static final Duration PROBE_WAIT = Duration.ofSeconds(3);

    /**
     * How long the caller of a release waits for the CP group; a release still unanswered then (this member expelled,
     * no majority) goes on in the background, up to Hazelcast's own operation timeout, so the call whose write is
     * done does not wait minutes for it.
     */
    static final Duration RELEASE_IN_FOREGROUND = Duration.ofSeconds(1);

    /**
     * After a lock call that failed (the CP group may have committed the lock, or may still), its lock is given back
     * at once and again this much later, in the background.
     */
    static final Duration GIVE_BACK_AGAIN = Duration.ofSeconds(3);

    /**
     * How much longer than its timeout an acquire waits for the CP group's answers. Without a majority Hazelcast's
     * calls wait for its own invocation timeout (60 to 120 s), whatever the acquire's: the acquire fails then instead,
     * and a lock the CP group grants later is given back.
     */
    static final Duration ANSWER_GRACE = Duration.ofSeconds(3);

    private static final System.Logger LOG = System.getLogger(HazelcastTokenIssuer.class.getName());

    private final HazelcastInstance hazelcast;
    private final String prefix;
    private final String service;
    private final String instanceId;
    private final Duration checkInterval;
    private final Set<HazelcastLease> held = ConcurrentHashMap.newKeySet();
    /** Fetching a proxy asks the METADATA CP group each time (Hazelcast says to keep them): one per lock name. */
    private final ConcurrentHashMap<String, FencedLock> locks = new ConcurrentHashMap<>();
    private final ScheduledExecutorService watcher;
    private final ExecutorService prober;
    private final ExecutorService releaser;
    private final ExecutorService locker;

    /**
     * The highest fence this issuer has seen, of any lock: every fence of the CP group comes from its Raft log, so a
     * lock granted after that answer arrived has a larger one. A smaller one means the CP group started its log again
     * (a CP Subsystem reset, or the whole cluster restarted without CP persistence): its tokens are refused, fail
     * closed, also for resources this issuer never locked before.
     */
    private final SequenceWatch fences = new SequenceWatch(this::service, "the CP group's fences (its Raft log)",
            "the CP Subsystem was reset, or the whole cluster restarted without CP persistence",
            fence -> "fence " + fence);

    /**
     * Test seam, package-private: runs with the resource right after the lock was granted and before the lease is
     * returned. Does nothing unless a test in this package sets it.
     */
    volatile Consumer<String> afterGrant = resource -> { };

    /**
     * Test seam, package-private: runs with the resource on the locking thread right after
     * {@code tryLockAndGetFence} returned, before its answer reaches the acquirer, so a test can make the call fail
     * after the CP group granted the lock. Does nothing unless a test in this package sets it.
     */
    volatile Consumer<String> afterLockCall = resource -> { };

    /**
     * Test seam, package-private: runs with the resource on the releasing thread before it asks the CP group. Does
     * nothing unless a test in this package sets it.
     */
    volatile Consumer<String> beforeRelease = resource -> { };

    /**
     * An issuer with the {@link #DEFAULT_PREFIX} and {@link #DEFAULT_CHECK_INTERVAL}.
     *
     * @see #HazelcastTokenIssuer(HazelcastInstance, String, Duration, MeterRegistry)
     */
    public HazelcastTokenIssuer(HazelcastInstance hazelcast, MeterRegistry registry) {
        this(hazelcast, DEFAULT_PREFIX, DEFAULT_CHECK_INTERVAL, registry);
    }

    /**
     * @param hazelcast     a started member or client of a cluster whose CP Subsystem is enabled (3 or more CP
     *                      members); its CP session is this issuer's
     * @param prefix        the start of every lock name; no {@code @} (Hazelcast reads what follows as a CP group)
     * @param checkInterval how often held leases are checked for a lost CP session, at least 100 ms
     * @param registry      for the issuer's counters, or {@code null}
     * @throws FencingConfigurationException when the instance is a member in CP "unsafe mode"
     *                                       ({@code cp-member-count} 0) or not running
     * @throws IllegalArgumentException      when the prefix or interval is invalid
     */
    public HazelcastTokenIssuer(HazelcastInstance hazelcast, String prefix, Duration checkInterval,
                                MeterRegistry registry) {
        super(registry, "hazelcast");
        this.hazelcast = Objects.requireNonNull(hazelcast, "hazelcast");
        this.prefix = Objects.requireNonNull(prefix, "prefix");
        if (prefix.indexOf('@') >= 0) {
            throw new IllegalArgumentException("prefix '" + prefix + "' must not contain '@': Hazelcast reads what "
                    + "follows it as a CP group name");
        }
        if (checkInterval == null || checkInterval.toMillis() < 100) {
            throw new IllegalArgumentException("checkInterval must be at least 100 ms, was " + checkInterval);
        }
        this.checkInterval = checkInterval;
        this.service = CpSubsystemCheck.describe(hazelcast);
        CpSubsystemCheck.refuseUnsafeMode(hazelcast, service);
        this.instanceId = hazelcast.getLocalEndpoint().getUuid().toString().replace("-", "");
        this.watcher = Executors.newSingleThreadScheduledExecutor(daemon("fencing-hazelcast-watcher"));
        this.prober = Executors.newCachedThreadPool(daemon("fencing-hazelcast-probe"));
        this.releaser = Executors.newCachedThreadPool(daemon("fencing-hazelcast-release"));
        this.locker = Executors.newCachedThreadPool(daemon("fencing-hazelcast-lock"));
        long every = checkInterval.toMillis();
        watcher.scheduleWithFixedDelay(this::checkHeld, every, every, TimeUnit.MILLISECONDS);
    }

    /**
     * The lock name of a resource: the prefix and the resource with {@code %} and {@code @} percent-encoded, so that
     * no resource selects a CP group ({@code name@group}) and distinct resources stay distinct locks, and with a space
     * at either end encoded too ({@code %20}): Hazelcast trims a CP object's name, so {@code x} and {@code x } would
     * otherwise be one lock. Names without any of these are unchanged from earlier versions.
     */
    static String lockName(String prefix, String resource) {
        if (resource.indexOf('@') < 0 && resource.indexOf('%') < 0 && !resource.startsWith(" ")
                && !resource.endsWith(" ")) {
            return prefix + resource;
        }
        String encoded = resource.replace("%", "%25").replace("@", "%40");
        int start = 0;
        while (start < encoded.length() && encoded.charAt(start) == ' ') {
            start++;
        }
        int end = encoded.length();
        while (end > start && encoded.charAt(end - 1) == ' ') {
            end--;
        }
        return prefix + "%20".repeat(start) + encoded.substring(start, end) + "%20".repeat(encoded.length() - end);
    }

    /**
     * The holder of a token: the UUID of the Hazelcast member or client (whose CP session holds the lock), the
     * Hazelcast thread id the acquisition locked as (its own, {@link AsThread#acquisitionId()}) and the fence, e.g.
     * {@code 0f8e6c1a2b3d4e5f60718293a4b5c6d7/4611686018427387905@1234}: the lock's owner as the CP group sees it
     * (session, thread id) and the acquisition, unique per acquisition. At most 72 chars.
     */
    String holder(long threadId, long fence) {
        return instanceId + "/" + threadId + "@" + fence;
    }

    @Override
    protected HazelcastLease doAcquire(String resource, Duration timeout, Grant grant) throws Exception {
        long seenBefore = fences.seen(); // the fence granted below must be above every fence seen before
        long deadline = System.nanoTime() + waitNanos(timeout);
        FencedLock lock = fetchLock(resource, lockName(prefix, resource), timeout, deadline);
        long threadId = AsThread.acquisitionId();
        long fence = tryLock(resource, lock, threadId, timeout, deadline);
        if (fence == FencedLock.INVALID_FENCE) {
            throw new LockAcquisitionException(resource, "Timed out after " + timeout.toMillis()
                    + " ms waiting for the Hazelcast FencedLock '" + lock.getName() + "' on resource '" + resource
                    + "' (" + service + ")");
        }
        grant.granted(() -> unlockAs(lock, threadId));
        fences.accept(fence, seenBefore, false, "the lock of resource '" + resource + "' with");
        afterGrant.accept(resource);
        HazelcastLease lease = new HazelcastLease(this, new FencingToken(resource, fence, holder(threadId, fence)),
                lock, threadId);
        held.add(lease);
        return lease;
    }

    /**
     * {@code tryLockAndGetFence} as {@code threadId}, on a locking thread, so that an interrupt of the caller ends its
     * wait: Hazelcast's own call ignores interrupts (it waits out its timeout, and takes the lock if it is freed
     * meanwhile). A lock the CP group grants after the caller was interrupted is given back then. A call that fails
     * may have been committed by the CP group all the same (an {@code IndeterminateOperationStateException}, an
     * operation timeout), and nothing would release that lock before this process's CP session ends: it is given
     * back ({@link #giveBackAfterFailure}). Waits until {@code deadline} (the timeout and {@link #ANSWER_GRACE}): a
     * CP group without a majority does not answer before Hazelcast's invocation timeout, and a lock granted after the
     * acquire gave up is given back too.
     */
    private long tryLock(String resource, FencedLock lock, long threadId, Duration timeout, long deadline)
            throws Exception {
        java.util.function.Supplier<Long> call = () -> AsThread.call(threadId, () -> {
            long fence = lock.tryLockAndGetFence(timeout.toMillis(), TimeUnit.MILLISECONDS);
            afterLockCall.accept(resource);
            return fence;
        });
        CompletableFuture<Long> locking;
        try {
            locking = CompletableFuture.supplyAsync(call, locker);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            try {
                return call.get(); // after close(), as before: on the caller's thread
            } catch (RuntimeException failed) {
                throw lockFailed(resource, lock, threadId, failed);
            }
        }
        try {
            return locking.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            giveBackLate(locking, lock, threadId, "interrupted");
            throw e;
        } catch (TimeoutException e) {
            giveBackLate(locking, lock, threadId, "given up");
            throw noAnswer(resource, "asked for the lock '" + lock.getName() + "'", timeout, e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException failed) {
                throw lockFailed(resource, lock, threadId, failed);
            }
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }

    /**
     * Gives back the lock of a call whose acquire was {@code how} (interrupted, given up) before it answered: a lock
     * the CP group grants later, and one a failed call may have taken ({@link #giveBackAfterFailure}).
     */
    private void giveBackLate(CompletableFuture<Long> locking, FencedLock lock, long threadId, String how) {
        locking.whenComplete((late, error) -> {
            if (error != null) {
                giveBackAfterFailure(lock, threadId);
            } else if (late != null && late != FencedLock.INVALID_FENCE) {
                try {
                    unlockAs(lock, threadId);
                } catch (RuntimeException failed) {
                    LOG.log(System.Logger.Level.WARNING, () -> "Could not give back the Hazelcast lock '"
                            + lock.getName() + "' (fence " + late + ") granted after its acquire was " + how
                            + ", on " + service + "; the CP group frees it when this process's CP session ends: "
                            + failed);
                }
            }
        });
    }

    /** How long an acquire of {@code timeout} waits for the CP group: the timeout and {@link #ANSWER_GRACE}. */
    private static long waitNanos(Duration timeout) {
        try {
            return timeout.plus(ANSWER_GRACE).toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE / 4;
        }
    }

    /** The acquire's failure when the CP group did not answer in time, naming the resource and the cluster. */
    private LockAcquisitionException noAnswer(String resource, String what, Duration timeout, TimeoutException e) {
        return new LockAcquisitionException(resource, "The CP Subsystem of " + service + " did not answer within "
                + "the acquire's timeout of " + timeout.toMillis() + " ms and " + ANSWER_GRACE.toMillis() + " ms more ("
                + what + " for resource '" + resource + "'): no majority of CP members in the CP group 'default' (or "
                + "METADATA), or unreachable; a lock it grants later is given back", e);
    }

    /**
     * The kept proxy of a lock, fetched on a locking thread when it is not kept yet (fetching asks the METADATA CP
     * group, which without a majority waits for Hazelcast's invocation timeout), waiting until {@code deadline}.
     */
    private FencedLock fetchLock(String resource, String name, Duration timeout, long deadline) throws Exception {
        FencedLock kept = locks.get(name);
        if (kept != null) {
            return kept;
        }
        CompletableFuture<FencedLock> fetching;
        try {
            fetching = CompletableFuture.supplyAsync(() -> lock(name), locker);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            return lock(name); // after close(), as before: on the caller's thread
        }
        try {
            return fetching.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw noAnswer(resource, "asked for the lock '" + name + "'", timeout, e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }

    /** Gives back what a failed lock call may have taken; the exception to throw, naming the resource and cause. */
    private LockAcquisitionException lockFailed(String resource, FencedLock lock, long threadId,
                                                RuntimeException failed) {
        giveBackAfterFailure(lock, threadId);
        return new LockAcquisitionException(resource, "Could not lock resource '" + resource + "' on " + service
                + " (should the CP group have granted the lock, it is given back): " + failed, failed);
    }

    /**
     * Unlocks {@code lock} as the failed acquisition's id, in the background, at once and again after
     * {@link #GIVE_BACK_AGAIN} (a call the CP group had not committed yet may still be). An acquisition id is never
     * reused, so this never releases another acquisition's lock: when the id holds nothing, Hazelcast refuses the
     * unlock ({@code IllegalMonitorStateException}), quietly. Another failure is logged at WARNING; the lock then goes
     * when this process's CP session ends.
     */
    private void giveBackAfterFailure(FencedLock lock, long threadId) {
        Runnable giveBack = () -> {
            try {
                unlockAs(lock, threadId);
            } catch (IllegalMonitorStateException notHeld) {
                // the failed call took nothing, or the first give-back released it
            } catch (RuntimeException failed) {
                LOG.log(System.Logger.Level.WARNING, () -> "Could not give back the Hazelcast lock '"
                        + lock.getName() + "' that a failed acquire may have taken, on " + service + "; the CP "
                        + "group frees it when this process's CP session ends: " + failed);
            }
        };
        try {
            releaser.execute(giveBack);
            watcher.schedule(() -> releaser.execute(giveBack), GIVE_BACK_AGAIN.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            // the issuer is closed: the lock goes with the CP session
        }
    }

    /**
     * The kept proxy of a lock; fetched outside the map's lock, since fetching asks the CP group. A lock outside the
     * CP group {@code default} is refused before it is kept: a cluster in CP unsafe mode puts each lock in a group of
     * its own partition, named after the lock, which a client (unlike a member) cannot read from the configuration.
     */
    private FencedLock lock(String name) {
        FencedLock lock = locks.get(name);
        if (lock == null) {
            FencedLock fetched = hazelcast.getCPSubsystem().getLock(name);
            CpSubsystemCheck.refuseOutsideDefaultGroup(fetched, service);
            lock = Objects.requireNonNullElse(locks.putIfAbsent(name, fetched), fetched);
        }
        return lock;
    }

    @Override
    protected LockAcquisitionException failure(String resource, Duration timeout, Exception cause) {
        return new LockAcquisitionException(resource, "Could not lock resource '" + resource + "' on " + service
                + ": " + cause, cause);
    }

    /**
     * Unlocks once, as the acquiring thread, if the lock is still this lease's: its thread holds it with this lease's
     * fence. {@code false} when it is not: its CP session ended ({@code LockOwnershipLostException}), or the thread
     * holds the lock again through a new session with a larger fence, which an unlock would wrongly release (to
     * Hazelcast a lock belongs to a session and thread, not to an acquisition). Waits up to
     * {@link #RELEASE_IN_FOREGROUND}: a release the CP group has not answered by then goes on in the background (a
     * trial's member expelled after a pause held its caller 145 s in Hazelcast's operation timeout, with no word);
     * when it ends, a lock found no longer this lease's counts the lease lost, and a failure is logged at WARNING.
     */
    @Override
    protected boolean doRelease(HazelcastLease lease) throws Exception {
        held.remove(lease);
        CompletableFuture<Boolean> releasing = CompletableFuture.supplyAsync(() -> unlockIfOwn(lease), releaser);
        boolean interrupted = false;
        try {
            return releasing.get(RELEASE_IN_FOREGROUND.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException failed) {
            throw failed.getCause() instanceof Exception cause ? cause : failed;
        } catch (TimeoutException | InterruptedException slow) {
            interrupted = slow instanceof InterruptedException;
            releasing.whenComplete((released, error) -> {
                if (error != null) {
                    LOG.log(System.Logger.Level.WARNING, () -> "Could not release the Hazelcast lock on '"
                            + lease.token().resource() + "' (token " + lease.token().value() + ") on " + service
                            + "; the CP group frees it when this process's CP session ends: "
                            + (error.getCause() != null ? error.getCause() : error));
                } else if (!released) {
                    lostAtRelease(lease);
                }
            });
            return true; // released as far as the caller can tell; the outcome is reported when it is known
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The release itself, on a releasing thread, as the lease's thread. */
    private boolean unlockIfOwn(HazelcastLease lease) {
        beforeRelease.accept(lease.token().resource());
        try {
            long fence = AsThread.call(lease.threadId, lease.lock::getFence);
            if (fence != lease.token().value()) {
                return false;
            }
            unlockAs(lease.lock, lease.threadId);
            return true;
        } catch (IllegalMonitorStateException notOwner) { // LockOwnershipLostException included
            return false;
        }
    }

    /** Runs {@code lock.unlock()} as the Hazelcast thread {@code threadId}, from whichever thread calls it. */
    private static void unlockAs(FencedLock lock, long threadId) {
        AsThread.run(threadId, lock::unlock);
    }

    /** The watcher's round: marks lost every held lease whose lock the CP group no longer gives its thread. */
    private void checkHeld() {
        for (HazelcastLease lease : held) {
            if (lease.isReleased()) {
                held.remove(lease);
                continue;
            }
            if (!stillHeld(lease)) {
                held.remove(lease);
                markLost(lease, true);
            }
        }
    }

    /**
     * Whether the CP group still gives the lease's lock to its thread with its fence; {@code true} when it cannot
     * tell (no majority, a timeout): the fence protects the data either way, a loss is only reported.
     */
    private boolean stillHeld(HazelcastLease lease) {
        if (!hazelcast.getLifecycleService().isRunning()) {
            return false; // its member or client is gone, and its CP session with it
        }
        try {
            long fence = AsThread.call(lease.threadId, lease.lock::getFence);
            return fence == lease.token().value();
        } catch (IllegalMonitorStateException notOwner) { // LockOwnershipLostException included
            return false;
        } catch (RuntimeException unknown) {
            LOG.log(System.Logger.Level.DEBUG, () -> "Could not check " + lease + " on " + service + ": " + unknown);
            return true;
        }
    }

    /**
     * Asks the CP group, within 3 seconds, for the state of a lock: it answers only with a majority of its CP
     * members and a leader. Throws naming the cluster and the reason; takes no lock.
     */
    @Override
    public void probe() {
        String back = fences.wentBack();
        if (back != null) { // every acquisition is refused until a restart: the issuer is down, not the CP group
            throw new IllegalStateException(back);
        }
        CpSubsystemCheck.refuseUnsafeMode(hazelcast, service);
        // both steps may wait for a majority: naming a lock the first time asks the METADATA group for the default
        // group, reading it asks the default group
        askCp(() -> {
            FencedLock probe = hazelcast.getCPSubsystem().getLock(prefix + "probe");
            CpSubsystemCheck.refuseOutsideDefaultGroup(probe, service);
            return probe.isLocked();
        }, "grant locks");
    }

    /**
     * The CP group's current fence, whatever the resource: a lock of this issuer's own, which no resource's lock name
     * can be ({@code %} starts an escape in those), taken and given back at once; its fence is above every fence the
     * group issued before. Waits up to {@link #PROBE_WAIT} for the CP group.
     *
     * @throws IllegalStateException naming the cluster when the CP group does not answer in time
     */
    @Override
    public long highestIssued(String resource) {
        long seenBefore = fences.seen();
        long highest = askCp(() -> {
            FencedLock sequence = lock(prefix + "%sequence");
            long fence = sequence.tryLockAndGetFence(PROBE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            if (fence == FencedLock.INVALID_FENCE) {
                throw new IllegalStateException("its sequence lock '" + sequence.getName() + "' is held elsewhere");
            }
            sequence.unlock();
            return fence;
        }, "read its current fence");
        fences.accept(highest, seenBefore, false, "its sequence lock '" + prefix + "%sequence' with");
        return highest;
    }

    /** Whether some thread of some member or client holds the lock of {@code resource} now; waits as above. */
    @Override
    public boolean isHeld(String resource) {
        return askCp(() -> lock(lockName(prefix, resource)).isLocked(), "tell whether '" + resource + "' is locked");
    }

    /**
     * Every fence must be above {@code token} from now on (see {@link IssuedTokens#requireAbove}): the bound the
     * Spring Boot starter reads from the fence store when the CP group cannot be asked at startup. A fence at or below
     * it means the CP group started its log again (a reset, a whole-cluster restart): refused, as a fence below one
     * seen before is.
     */
    @Override
    public void requireAbove(long token, String source) {
        fences.floor(token, source);
    }

    /**
     * For the health details and startup messages: the member or client with its cluster (and, for a client, the
     * addresses it was given), the lock name prefix and the check interval.
     */
    @Override
    public java.util.Map<String, Object> describe() {
        java.util.Map<String, Object> details = new java.util.LinkedHashMap<>();
        details.put("instance", service);
        details.put("prefix", prefix);
        details.put("checkInterval", checkInterval.toString());
        return details;
    }

    /** {@code true}: the fences of every lock of the CP group come from one Raft log. */
    @Override
    public boolean oneSequence() {
        return true;
    }

    /**
     * Runs {@code question} on a probing thread, waiting up to {@link #PROBE_WAIT}; {@code what} names it in the
     * message of a failure (an {@link IllegalStateException} naming the cluster).
     */
    private <T> T askCp(java.util.function.Supplier<T> question, String what) {
        CompletableFuture<T> answer = CompletableFuture.supplyAsync(question, prober);
        try {
            return answer.get(PROBE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            answer.cancel(true);
            throw new IllegalStateException("The CP Subsystem of " + service + " did not answer within "
                    + PROBE_WAIT.toMillis() + " ms (asked to " + what + "): no majority of CP members in the CP "
                    + "group 'default' (or METADATA), or unreachable", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("The CP Subsystem of " + service + " cannot " + what + ": "
                    + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while asking the CP Subsystem of " + service + " to " + what,
                    e);
        }
    }

    /** Stops the watcher; held leases stay held until closed. Does not shut the Hazelcast instance down. */
    @Override
    public void close() {
        watcher.shutdownNow();
        prober.shutdownNow();
        releaser.shutdown(); // a release under way finishes; its lock goes with the session otherwise
        locker.shutdown();   // an acquire under way finishes (Hazelcast's wait ignores interrupts)
    }

    /** For messages: the cluster and instance this issuer uses. */
    String service() {
        return service;
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setDaemon(true);
            return thread;
        };
    }

    /**
     * One acquisition of a {@link FencedLock}: the lock, and the Hazelcast thread id that holds it (the unlock and
     * the watcher act as that thread).
     */
    static final class HazelcastLease extends AbstractLease {

        private final FencedLock lock;
        private final long threadId;

        HazelcastLease(HazelcastTokenIssuer issuer, FencingToken token, FencedLock lock, long threadId) {
            super(issuer, token);
            this.lock = lock;
            this.threadId = threadId;
        }
    }
}
