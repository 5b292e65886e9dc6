package dev.fencing.etcd;

import dev.fencing.issuer.AbstractLease;
import dev.fencing.issuer.AbstractTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.SequenceWatch;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.token.FencingToken;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.common.exception.ClosedClientException;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lock.LockResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.support.CloseableClient;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A {@link TokenIssuer} on etcd through jetcd's lock API. Locks are bound to a session lease that this issuer keeps
 * alive; the token is the <b>create revision</b> of the lock key, which Raft orders across the cluster, and which
 * grows from each holder to the next (etcd grants the lock in create-revision order). The holder is the session lease
 * (hex) and that revision ({@code 694d7a1b2c3d4e5f@1234}): unique per acquisition and at most 36 chars, whatever the
 * resource; the lock key itself is {@code prefix + lockName(resource) + "/" + lease in hex}, where
 * {@link #lockName(String)} encodes {@code %} and {@code /} so that resources stay independent of each other.
 *
 * <p>Any resource a {@link FencingToken} accepts can be locked. A failure after etcd granted the lock (the read of
 * the lock key timing out, building the token, an interrupt) deletes the lock key again before the exception
 * reaches the caller; so does a lock request that is granted after its acquire gave up.
 *
 * <p>etcd grants its lock per session lease, and all locks of this issuer share one session; so acquirers in this
 * process first queue on a local fair semaphore per resource (kept only while in use), and only one of them at a
 * time asks etcd. A lease hands its turn on when it is released or lost, whichever comes first. A release (or a
 * give-back) whose delete fails gives the whole session up first, its other leases counted lost: its key may remain,
 * and etcd would hand this session's next request for the resource that key, with the last lease's token.
 *
 * <p>When the session lease is gone (etcd no longer knows it, no keep-alive succeeded within its TTL, or the client
 * was closed), every lease held through it is marked lost and counted, and the next acquire starts a new session.
 * No keep-alive answer within the TTL is also judged by this process's own clock where a lease is asked
 * ({@link Lease#isLost()}, which every fenced check does): a holder that wakes from a pause longer than the TTL
 * knows its lease is lost before its first write, without waiting for jetcd's keep-alive thread to notice.
 * A keep-alive stream that breaks and is reopened in time (a member restarting) is not a loss. Releasing a lost
 * lease is quiet.
 *
 * <p>Releasing deletes the lease's own lock key only, the key whose create revision is its token, in one
 * transaction; a key found gone or replaced at release counts the lease as lost. A lease whose lock request had to be
 * sent again after a transient error (a member stopping under it, a broken connection) also watches its key while it
 * is held: etcd's lock handler deletes the requester's key when its request is cancelled, and the handler of the
 * failed request may do so after the retry was granted the same key. Such a deletion marks the lease lost and counts
 * it, within a moment; the fencing token of the next holder fences the lost one's writes either way. jetcd retries an
 * {@code UNAVAILABLE} lock request itself unless its client was built with {@code retryMaxAttempts(0)}; this issuer
 * does not see those retries, and a grant after one is not watched.
 *
 * <p>As {@link IssuedTokens}, for recovery: the cluster's revision now bounds every token issued, and a resource is
 * held while it has a lock key (one read).
 */
public final class EtcdTokenIssuer extends AbstractTokenIssuer<EtcdTokenIssuer.EtcdLease>
        implements IssuedTokens, IssuerFloors, AutoCloseable {

    /** The key prefix of all locks unless configured otherwise. */
    public static final String DEFAULT_PREFIX = "/fencing/locks/";

    private final Client client;
    private final String prefix;
    private final IssuedTokens issued;
    private final long sessionTtlSeconds;
    private final String endpoints;
    /** A lock, not a monitor: a virtual thread granting the session blocks on etcd without pinning its carrier. */
    private final ReentrantLock sessionLock = new ReentrantLock();
    private volatile Session session;
    /** The clock a session's age is measured with; a test seam. */
    private LongSupplier nanoClock = System::nanoTime;

    /** How long releasing a lock waits for etcd. */
    static final Duration RELEASE_WAIT = Duration.ofSeconds(10);

    /**
     * How long the caller of a release waits for etcd; a release still unanswered then goes on in the background, up
     * to {@link #RELEASE_WAIT}, and keeps this process's turn on the resource until it ends.
     */
    static final Duration RELEASE_IN_FOREGROUND = Duration.ofSeconds(1);

    private static final System.Logger LOG = System.getLogger(EtcdTokenIssuer.class.getName());

    /**
     * Test seam, package-private: runs with the resource right after the lock was granted and before the lease is
     * returned, so a test can inject a failure there. Does nothing unless a test in this package sets it.
     */
    volatile Consumer<String> afterGrant = resource -> { };

    /**
     * Test seam, package-private: sends one lock request, so that a test can make an attempt fail after it reached
     * etcd, as a member stopping under it does.
     */
    volatile LockCall lockCall;

    /** One lock request to etcd. */
    @FunctionalInterface
    interface LockCall {
        CompletableFuture<LockResponse> lock(ByteSequence name, long leaseId);
    }

    /** How long a lease whose key watch ended waits before reading its key again after a failed read. */
    private static final long RECHECK_DELAY_MILLIS = 500;
    private final ResourceTurns turns = new ResourceTurns();

    /**
     * @param client     a jetcd client
     * @param endpoints  the endpoints the client uses, for messages
     * @param prefix     the key prefix of lock keys
     * @param sessionTtl time-to-live of the session lease, whole seconds, at least one; a holder that cannot keep it
     *                   alive that long loses its locks
     * @param registry   for the issuer's counters, or {@code null}
     */
    public EtcdTokenIssuer(Client client, String endpoints, String prefix, Duration sessionTtl,
            MeterRegistry registry) {
        super(registry, "etcd", false); // revisions guards its one sequence for all resources
        this.client = Objects.requireNonNull(client, "client");
        this.lockCall = (name, leaseId) -> client.getLockClient().lock(name, leaseId);
        this.endpoints = Objects.requireNonNull(endpoints, "endpoints");
        this.prefix = Objects.requireNonNull(prefix, "prefix");
        if (sessionTtl == null || sessionTtl.toSeconds() < 1 || sessionTtl.toNanosPart() != 0) {
            throw new IllegalArgumentException("sessionTtl must be a whole number of seconds, at least one (etcd "
                    + "counts leases in seconds), was " + sessionTtl);
        }
        this.sessionTtlSeconds = sessionTtl.toSeconds();
        this.issued = new EtcdIssuedTokens(client, prefix, endpoints);
    }

    /**
     * The highest revision this issuer has seen (a lock key's create revision, or the revision a recovery read). On
     * the same cluster every lock key created after that answer arrived has a larger create revision; a smaller one
     * means the cluster's revision went back, and its tokens are refused (fail closed).
     */
    private final SequenceWatch revisions = new SequenceWatch(this::service, "the cluster's revision",
            "restarted on an empty data dir, restored from an older snapshot, or another cluster at these endpoints",
            revision -> "revision " + revision);

    /** The cluster, for messages: {@code etcd at} its endpoints. */
    private String service() {
        return "etcd at " + endpoints;
    }

    /** The cluster's revision now: at or above the create revision of every lock key created before. */
    @Override
    public long highestIssued(String resource) {
        long seenBefore = revisions.seen();
        long highest = issued.highestIssued(resource);
        revisions.accept(highest, seenBefore, true, "a read at"); // a read does not move the revision: equal is fine
        return highest;
    }

    /**
     * A checked no-op: every token comes from one sequence for all resources, the
     * revision (the cluster's one revision counter), so every token issued from now on is larger than every token
     * issued before, for any resource, whatever floor a fence store folded a family into (as
     * {@link IssuerFloors#ONE_SEQUENCE}). A fence store's compaction may be given this issuer directly.
     *
     * @throws IllegalArgumentException when {@code family} is blank or {@code floor} negative
     */
    @Override
    public void raiseFamilyFloor(String family, long floor) {
        IssuerFloors.checkArguments("EtcdTokenIssuer.raiseFamilyFloor", family, floor);
    }

    @Override
    public boolean isHeld(String resource) {
        return issued.isHeld(resource);
    }

    /** Every lock key's create revision must be above {@code token} (see {@link IssuedTokens#requireAbove}). */
    @Override
    public void requireAbove(long token, String source) {
        revisions.floor(token, source);
    }

    /** {@code true}: every token comes from one sequence for all resources, the cluster's revision. */
    @Override
    public boolean oneSequence() {
        return true;
    }

    @Override
    protected EtcdLease doAcquire(String resource, Duration timeout, Grant grant) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        long seenBefore = revisions.seen(); // the lock key created below must be above every revision seen before
        ResourceTurns.Turn turn = turns.enter(resource);
        AtomicBoolean mine = new AtomicBoolean();
        boolean took = false;
        try {
            if (!turn.tryAcquire(left(deadline))) {
                throw new LockAcquisitionException(resource, "Timed out after " + timeout.toMillis()
                        + " ms waiting for the etcd lock on resource '" + resource + "', held in this process");
            }
            took = true;
            mine.set(true);
            Session current = session(deadline);
            ByteSequence name = ByteSequence.from(prefix + lockName(resource), StandardCharsets.UTF_8);
            Locked locked;
            while (true) {
                try {
                    locked = lockRetryingTransientErrors(resource, name, current, deadline, timeout, turn, mine);
                    break;
                } catch (ExecutionException e) {
                    // etcd expired the session lease before its keep-alive stream told us (a leader change under
                    // load, a long pause): its locks are gone, so are this process's leases on it; a new session
                    // takes over, as it would on the next acquire
                    if (!leaseNotFound(e.getCause()) || left(deadline) < TimeUnit.MILLISECONDS.toNanos(100)) {
                        throw e;
                    }
                    current.markLost(true);
                    current = session(deadline);
                }
            }
            ByteSequence key = locked.response().getKey();
            if (locked.retried()) {
                current.exposed.add(resource);
            }
            // from here on, every failure gives the lock back, and only then this process's turn on the resource
            mine.set(false);
            Session granting = current;
            grant.granted(() -> giveBack(key, turn, granting));
            GetResponse read = getRetryingTransientErrors(key, deadline);
            List<KeyValue> kvs = read.getKvs();
            if (kvs.isEmpty()) {
                throw new LockAcquisitionException(resource, "etcd lock key for resource '" + resource
                        + "' vanished right after it was granted (" + (locked.retried()
                        ? "the lock request was sent again after a transient error, and the failed request's handler"
                                + " deleted the key; the lock is not held, try again"
                        : "session lease expired?") + ")");
            }
            long revision = kvs.get(0).getCreateRevision();
            revisions.accept(revision, seenBefore, false, "the lock key of resource '" + resource + "' created at");
            afterGrant.accept(resource);
            EtcdLease lease = new EtcdLease(new FencingToken(resource, revision, holder(current.leaseId, revision)),
                    key, current, turn); // the lease owns the turn now
            current.held.add(lease);
            if (current.lost) {          // the session died while we were locking
                markLost(lease, false);
            }
            if (current.exposed.contains(resource)) {
                // a failed attempt's handler may still delete the key, this grant's or, since every lease of the
                // session on the resource gets the same key name, a later one's: watch it from here on
                lease.watchKey(read.getHeader().getRevision() + 1);
            }
            return lease;
        } finally {
            if (mine.get()) {
                turn.release();
            } else if (!took) {
                turn.leave();
            }
        }
    }

    @Override
    protected LockAcquisitionException failure(String resource, Duration timeout, Exception e) {
        if (e instanceof TimeoutException) {
            return new LockAcquisitionException(resource, "etcd at " + endpoints + " did not answer within "
                    + timeout.toMillis() + " ms while locking resource '" + resource + "'", e);
        }
        Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        return new LockAcquisitionException(resource, "Could not lock resource '" + resource
                + "' on etcd at " + endpoints + ": " + cause, cause);
    }

    /**
     * The resource as an etcd lock name: {@code %} and {@code /} percent-encoded, everything else as it is. etcd's
     * lock waits on every key under {@code name + "/"}, so a raw {@code /} would make a holder of {@code a/b} block
     * acquirers of {@code a}; encoded, no lock name is a prefix of another's keys. Names without either character
     * are unchanged from earlier versions.
     */
    static String lockName(String resource) {
        if (resource.indexOf('/') < 0 && resource.indexOf('%') < 0) {
            return resource;
        }
        return resource.replace("%", "%25").replace("/", "%2F");
    }

    /**
     * The holder of a token: the session lease (hex) and the create revision of the lock key, e.g.
     * {@code 694d7a1b2c3d4e5f@1234}. Unique per acquisition (etcd gives every created key its own revision) and at
     * most 36 chars, whatever the resource and prefix.
     */
    static String holder(long sessionLeaseId, long revision) {
        return Long.toHexString(sessionLeaseId) + "@" + revision;
    }

    /**
     * Gives back a lock that was granted and is not handed out, then this process's turn on the resource: on a
     * failure to unlock, the unlock is sent once more without waiting, the session given up (its key may remain:
     * {@link #keyMayRemain}), and the first failure thrown.
     */
    private void giveBack(ByteSequence granted, ResourceTurns.Turn turn, Session session) throws Exception {
        try {
            unlockQuietly(granted);
        } catch (Exception e) {
            try {
                client.getLockClient().unlock(granted); // one more try, not waited for
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
            keyMayRemain(session);
            throw e;
        } finally {
            turn.release();
        }
    }

    /**
     * A delete of one of {@code session}'s lock keys failed, so the key may still be in etcd. etcd's lock hands a
     * session that asks again for the same resource its existing key, create revision and all, so the next lease
     * here would get the last one's token: the session is given up before this process's turn on the resource is
     * handed on. Its other leases are counted lost (fail closed: etcd could not be reached to tell), it is no longer
     * kept alive and is revoked (best effort: when etcd cannot be reached, it expires after its TTL, and the key with
     * it, instead of being renewed for as long as this process runs), and the next acquire starts a new session.
     */
    private void keyMayRemain(Session session) {
        session.markLost(true);
        retire(session);
    }

    /**
     * Deletes a lock key, waiting up to {@link #RELEASE_WAIT} even on an interrupted thread (the interrupt is kept).
     */
    private void unlockQuietly(ByteSequence key) throws ExecutionException, TimeoutException {
        awaitRelease(client.getLockClient().unlock(key), key);
    }

    /**
     * Waits up to {@link #RELEASE_WAIT} for a release request, even on an interrupted thread (the interrupt is kept).
     */
    private static <T> T awaitRelease(CompletableFuture<T> request, ByteSequence key)
            throws ExecutionException, TimeoutException {
        return awaitRelease(request, key, System.nanoTime() + RELEASE_WAIT.toNanos());
    }

    /** Waits until {@code deadline} for a release request, even on an interrupted thread (the interrupt is kept). */
    private static <T> T awaitRelease(CompletableFuture<T> request, ByteSequence key, long deadline)
            throws ExecutionException, TimeoutException {
        boolean interrupted = Thread.interrupted();
        try {
            return request.get(left(deadline), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            interrupted = true;
            throw new TimeoutException("interrupted again while unlocking " + key);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Deletes the lease's own lock key (the one whose create revision is its token), then hands this process's turn
     * on the resource on; {@code false} when the key was gone or replaced: the lock was no longer this lease's. Waits
     * up to {@link #RELEASE_IN_FOREGROUND}: a release etcd has not answered by then (no quorum, a leader election, a
     * broken connection) goes on in the background, up to {@link #RELEASE_WAIT}, so that the call that held the lock
     * is not held up by an outage after its write is done. This process's turn stays taken until the delete ends:
     * the next acquirer here would ask for the same key name and could be handed the key the delete removes. A
     * background release that finds the key gone counts the lease lost then; one that fails is logged at WARNING.
     */
    @Override
    protected boolean doRelease(EtcdLease etcd) throws Exception {
        etcd.session.held.remove(etcd);
        etcd.stopWatching();
        CompletableFuture<Boolean> deleting;
        try {
            deleting = deleteOwnKey(etcd.key, etcd.token().value());
        } catch (RuntimeException closed) {
            etcd.returnTurn();
            throw closed;
        }
        deleting.whenComplete((deleted, error) -> {
            if (error != null) {
                keyMayRemain(etcd.session);
            }
            etcd.returnTurn();
        });
        try {
            return awaitRelease(deleting, etcd.key, System.nanoTime() + RELEASE_IN_FOREGROUND.toNanos());
        } catch (TimeoutException slow) {
            deleting.whenComplete((deleted, error) -> {
                if (error != null) {
                    LOG.log(System.Logger.Level.WARNING, () -> "Could not release the etcd lock on '"
                            + etcd.token().resource() + "' (token " + etcd.token().value() + ") at " + endpoints
                            + " within " + RELEASE_WAIT.toSeconds() + " s; it goes when the session lease expires, or "
                            + "at once if the delete was applied after all. The session is given up: its other "
                            + "leases are counted lost, and the next acquire starts a new one: " + unwrap(error));
                } else if (!deleted && session != null) { // closing the issuer revoked the session: not a loss
                    lostAtRelease(etcd);
                }
            });
            return true; // released as far as the caller can tell; the outcome is reported when it is known
        }
    }

    /**
     * Deletes {@code key} if its create revision is still {@code revision}, again after transient errors, until
     * {@link #RELEASE_WAIT} has passed; completes with whether it did. Never deletes a key created after it by another
     * lease of the same session. A compare that fails after an attempt whose answer was lost counts as deleted: that
     * attempt may have deleted the key itself.
     */
    private CompletableFuture<Boolean> deleteOwnKey(ByteSequence key, long revision) {
        CompletableFuture<Boolean> result = new CompletableFuture<>();
        attemptDelete(key, revision, System.nanoTime() + RELEASE_WAIT.toNanos(), false, result);
        return result;
    }

    private void attemptDelete(ByteSequence key, long revision, long deadline, boolean sentBefore,
                               CompletableFuture<Boolean> result) {
        CompletableFuture<TxnResponse> sent;
        try {
            sent = client.getKVClient().txn()
                    .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision)))
                    .Then(Op.delete(key, DeleteOption.DEFAULT))
                    .commit();
        } catch (RuntimeException closed) {
            result.completeExceptionally(closed);
            return;
        }
        sent.orTimeout(left(deadline), TimeUnit.NANOSECONDS).whenComplete((response, error) -> {
            if (error == null) {
                result.complete(response.isSucceeded() || sentBefore);
                return;
            }
            Throwable cause = unwrap(error);
            if (!isTransient(cause) || deadline - System.nanoTime() < TimeUnit.MILLISECONDS.toNanos(100)) {
                result.completeExceptionally(cause);
                return;
            }
            // run by the delay's own thread: the attempt only sends a request, and the common pool may have one
            // worker (Java 25 on 2 cores) that the application keeps busy
            CompletableFuture.delayedExecutor(100, TimeUnit.MILLISECONDS, Runnable::run)
                    .execute(() -> attemptDelete(key, revision, deadline, true, result));
        });
    }

    private static Throwable unwrap(Throwable error) {
        return error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                ? error.getCause() : error;
    }

    /** Its endpoints, lock key prefix and session lease TTL. */
    @Override
    public Map<String, Object> describe() {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("endpoints", endpoints);
        details.put("prefix", prefix);
        details.put("sessionTtl", Duration.ofSeconds(sessionTtlSeconds).toString());
        return details;
    }

    /** The session lease a lease of this issuer is bound to. */
    static long sessionLeaseId(Lease lease) {
        return ((EtcdLease) lease).session.leaseId;
    }

    /** Stops keeping the session alive and revokes it: every lock still held is released by etcd. */
    @Override
    public void close() {
        sessionLock.lock();
        try {
            Session current = session;
            session = null;
            if (current != null) {
                current.markLost(false);
                current.keepAlive.close();
                client.getLeaseClient().revoke(current.leaseId);
            }
        } finally {
            sessionLock.unlock();
        }
    }

    /** How many resources have a turn in this process now (for tests: released ones leave none). */
    int resourcesWithTurns() {
        return turns.size();
    }

    /** A granted lock request, and whether it had to be sent more than once. */
    private record Locked(LockResponse response, boolean retried) {
    }

    /**
     * Asks etcd for the lock, again after transient errors (a leader election in progress, an unavailable member),
     * until the deadline. Retrying is safe: the lock key is named after the session lease, so a request that did
     * reach the server is simply continued. But the handler of the failed request may delete that key when it learns
     * of the failure, even after the retry was granted: the caller watches the key of a retried grant.
     */
    private Locked lockRetryingTransientErrors(String resource, ByteSequence name, Session current,
                                                     long deadline, Duration timeout, ResourceTurns.Turn turn,
                                                     AtomicBoolean ownsTurn)
            throws InterruptedException, ExecutionException {
        boolean retried = false;
        while (true) {
            CompletableFuture<LockResponse> locking = lockCall.lock(name, current.leaseId);
            try {
                return new Locked(locking.get(left(deadline), TimeUnit.NANOSECONDS), retried);
            } catch (InterruptedException e) {
                giveBackWhenGranted(locking, turn, ownsTurn, current);
                throw e;
            } catch (TimeoutException e) {
                giveBackWhenGranted(locking, turn, ownsTurn, current);
                throw new LockAcquisitionException(resource, "Timed out after " + timeout.toMillis()
                        + " ms waiting for the etcd lock on resource '" + resource + "' (" + endpoints + ")");
            } catch (ExecutionException e) {
                if (!isTransient(e.getCause()) || deadline - System.nanoTime() < TimeUnit.MILLISECONDS.toNanos(100)) {
                    throw e;
                }
                retried = true;
                Thread.sleep(100);
            }
        }
    }

    /** Reads {@code key}, again after transient errors until the deadline (a read changes nothing). */
    private GetResponse getRetryingTransientErrors(ByteSequence key, long deadline)
            throws InterruptedException, ExecutionException, TimeoutException {
        return retryingTransientErrors(() -> client.getKVClient().get(key), deadline);
    }

    /**
     * Sends a request, again after transient errors until the deadline: for requests that change nothing, or whose
     * duplicate does no harm (a second session lease granted to nobody expires unused after its TTL).
     */
    private static <T> T retryingTransientErrors(Supplier<CompletableFuture<T>> request, long deadline)
            throws InterruptedException, ExecutionException, TimeoutException {
        while (true) {
            try {
                return request.get().get(left(deadline), TimeUnit.NANOSECONDS);
            } catch (ExecutionException e) {
                if (!isTransient(e.getCause()) || deadline - System.nanoTime() < TimeUnit.MILLISECONDS.toNanos(100)) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    /**
     * The lock request of an acquirer that gave up may still be granted later: give that lock back as soon as it is.
     * The resource's turn in this process goes with the request until then, because the next acquirer here would ask
     * for the very same key (it is named after the session lease) and could be handed the lock this give-back
     * deletes; a give-back that fails gives the session up first ({@link #keyMayRemain}).
     */
    private void giveBackWhenGranted(CompletableFuture<LockResponse> locking, ResourceTurns.Turn turn,
                                     AtomicBoolean ownsTurn, Session session) {
        ownsTurn.set(false);
        locking.whenComplete((late, error) -> {
            if (late == null) {
                turn.release();
                return;
            }
            try {
                client.getLockClient().unlock(late.getKey()).whenComplete((done, failed) -> {
                    if (failed != null) {
                        keyMayRemain(session);
                    }
                    turn.release();
                });
            } catch (RuntimeException closed) {
                turn.release();
            }
        });
    }

    /** Whether etcd refused a request because it no longer knows the session lease it names. */
    static boolean leaseNotFound(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof EtcdException etcd && etcd.getErrorCode() == ErrorCode.NOT_FOUND
                    || t instanceof StatusRuntimeException status
                            && status.getStatus().getCode() == Status.Code.NOT_FOUND
                    || String.valueOf(t.getMessage()).contains("requested lease not found")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a request failed for a reason another attempt can get past: a leader election in progress, an
     * unavailable member, or the connection to a member closing under the request (the member stopped; gRPC reports
     * {@code UNKNOWN: channel closed}, and the client reconnects to another).
     */
    static boolean isTransient(Throwable error) {
        if (error instanceof StatusRuntimeException status) {
            Status.Code code = status.getStatus().getCode();
            String description = String.valueOf(status.getStatus().getDescription());
            return code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED
                    || code == Status.Code.UNKNOWN && description.contains("channel closed")
                    || description.contains("leader changed") || description.contains("request timed out")
                    || description.contains("no leader");
        }
        return false;
    }

    private Session session(long deadline)
            throws InterruptedException, ExecutionException, TimeoutException {
        Session current = session;
        if (current != null && !current.lost) {
            return current;
        }
        sessionLock.lock();
        try {
            current = session;
            if (current != null && !current.lost) {
                return current;
            }
            long grantedFrom = nanoClock.getAsLong(); // before the grant is sent: etcd's TTL runs from later on
            long leaseId = retryingTransientErrors(() -> client.getLeaseClient().grant(sessionTtlSeconds), deadline)
                    .getID();
            Session fresh = new Session(leaseId, grantedFrom);
            fresh.keepAlive = client.getLeaseClient().keepAlive(leaseId, fresh);
            session = fresh;
            if (current != null) {
                retire(current);
            }
            return fresh;
        } finally {
            sessionLock.unlock();
        }
    }

    /**
     * A session given up for lost: stops keeping it alive and revokes it, so that etcd drops its keys now rather than
     * after its TTL. etcd may still count it alive (a new leader renews every lease), and its keys, of leases this
     * process already counts lost, would make the new session's requests for the same resources wait. Best effort:
     * a lease etcd expired already answers NOT_FOUND, and one it cannot revoke now expires after its TTL.
     */
    private void retire(Session lost) {
        try {
            lost.keepAlive.close();
            client.getLeaseClient().revoke(lost.leaseId);
        } catch (RuntimeException closed) {
            // the client is closed: etcd drops the lease after its TTL
        }
    }

    /** Test seam: the clock a session's age without a keep-alive answer is measured with. */
    void nanoClock(LongSupplier clock) {
        this.nanoClock = clock;
    }

    /** How long {@link #probe()} waits for etcd's answer. */
    static final Duration PROBE_TIMEOUT = Duration.ofSeconds(3);

    /**
     * Fails unless etcd answers a linearizable read under the lock prefix (which needs a quorum and a leader) within
     * {@link #PROBE_TIMEOUT}.
     *
     * @throws IllegalStateException naming the endpoints and what went wrong
     */
    @Override
    public void probe() {
        String back = revisions.wentBack();
        if (back != null) { // every acquisition is refused until a restart: the issuer is down, not the cluster
            throw new IllegalStateException(back);
        }
        CompletableFuture<?> read = client.getKVClient()
                .get(ByteSequence.from(prefix + "fencing.health.probe", StandardCharsets.UTF_8));
        try {
            read.get(PROBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            read.cancel(true);
            throw new IllegalStateException("etcd at " + endpoints + " did not answer a read within "
                    + PROBE_TIMEOUT.toMillis() + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while reading from etcd at " + endpoints, e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("etcd at " + endpoints + " refused a read: " + e.getCause(), e.getCause());
        }
    }

    private static long left(long deadline) {
        return Math.max(1, deadline - System.nanoTime());
    }

    /** One session lease kept alive by a stream; when it fails, the locks bound to it are lost. */
    final class Session implements StreamObserver<LeaseKeepAliveResponse> {
        final long leaseId;
        final Set<EtcdLease> held = ConcurrentHashMap.newKeySet();
        /**
         * The resources whose lock request was sent again on this session. The failed request's handler in etcd may
         * delete the key at any later time, and the key's name is the same for every lease of this session on the
         * resource; so every later grant of it on this session is watched too. Gone with the session.
         */
        final Set<String> exposed = ConcurrentHashMap.newKeySet();
        volatile CloseableClient keepAlive;
        volatile boolean lost;
        /**
         * When etcd last renewed it, by {@link #nanoClock}: before its grant was sent, then at each keep-alive answer.
         */
        private volatile long renewedAt;

        Session(long leaseId, long grantedFrom) {
            this.leaseId = leaseId;
            this.renewedAt = grantedFrom;
        }

        @Override
        public void onNext(LeaseKeepAliveResponse response) {
            if (response.getTTL() <= 0) {
                markLost(true);
            } else {
                renewedAt = nanoClock.getAsLong();
            }
        }

        /**
         * Whether no keep-alive answer came within the TTL, by this process's clock (jetcd's own deadline, which its
         * keep-alive thread checks about once a second): then it is marked lost here and now, with its leases. A
         * process paused past the TTL (a GC, SIGSTOP) finds it so on its first check after waking, before its write,
         * however its threads are scheduled.
         */
        boolean outlived() {
            if (lost) {
                return true;
            }
            if (nanoClock.getAsLong() - renewedAt < TimeUnit.SECONDS.toNanos(sessionTtlSeconds)) {
                return false;
            }
            markLost(true);
            return true;
        }

        /**
         * Terminal: etcd no longer knows the lease, or the client is closed. A stream error is not: jetcd reopens
         * the keep-alive stream, and if it stays down past the lease's TTL, its deadline check completes the stream.
         */
        @Override
        public void onError(Throwable error) {
            boolean leaseGone = error instanceof EtcdException etcd && etcd.getErrorCode() == ErrorCode.NOT_FOUND;
            if (leaseGone || error instanceof ClosedClientException) {
                markLost(true);
            }
        }

        @Override
        public void onCompleted() {
            markLost(true);
        }

        void markLost(boolean count) {
            lost = true;
            for (EtcdLease lease : held) {
                EtcdTokenIssuer.this.markLost(lease, count);
            }
        }
    }

    /**
     * A lease of this issuer: its lock key, its session, this process's turn on the resource, and, for a lease whose
     * lock request was retried, the watch on its key.
     */
    final class EtcdLease extends AbstractLease {
        final ByteSequence key;
        final Session session;
        final ResourceTurns.Turn turn;

        private final AtomicBoolean turnReturned = new AtomicBoolean();
        private final Object watchLock = new Object();
        /** The watch on the key now, if any; package-private for tests. */
        volatile Watch.Watcher watcher;
        private KeyWatch watching;
        private boolean unwatched;

        EtcdLease(FencingToken token, ByteSequence key, Session session, ResourceTurns.Turn turn) {
            super(EtcdTokenIssuer.this, token);
            this.key = key;
            this.session = session;
            this.turn = turn;
        }

        /**
         * A lost lease stops watching its key and gives this process's turn on the resource back at once: its lock is
         * gone (with its session, or its key was deleted), so the next acquire here asks etcd (on a new session if
         * the old one died), not behind a holder that may never release.
         */
        @Override
        protected void onLost() {
            stopWatching();
            returnTurn();
        }

        /** Also lost, without asking etcd, once its session went without a keep-alive answer for the TTL. */
        @Override
        public boolean isLost() {
            return super.isLost() || (!isReleased() && session.outlived() && super.isLost());
        }

        /**
         * Watches the key for its deletion from {@code revision} on (no event before it is missed): a deletion while
         * the lease is held marks it lost. A watch that ends on its own (etcd compacted past it, no leader) is
         * replaced after a read of the key, which finds a deletion in between.
         */
        void watchKey(long revision) {
            KeyWatch next = new KeyWatch();
            synchronized (watchLock) {
                if (unwatched) {
                    return;
                }
                watching = next;
            }
            // jetcd calls a listener back under its own lock: never call jetcd while holding watchLock
            Watch.Watcher started;
            try {
                started = client.getWatchClient().watch(key,
                        WatchOption.builder().withRevision(revision).withNoPut(true).withRequireLeader(true)
                                .build(), next);
            } catch (RuntimeException closed) {
                return; // the client is closed: the session reports the loss
            }
            boolean stale;
            synchronized (watchLock) {
                stale = unwatched || watching != next;
                if (!stale) {
                    watcher = started;
                }
            }
            if (stale) {
                started.close();
            }
        }

        /** Stops the watch for good; on release and on loss. */
        void stopWatching() {
            Watch.Watcher last;
            synchronized (watchLock) {
                unwatched = true;
                watching = null;
                last = watcher;
            }
            if (last != null) {
                last.close();
            }
        }

        /** Reads the key: gone or replaced, the lease is lost; there, it is watched again from the read on. */
        private void recheck() {
            readKey(response -> watchKey(response.getHeader().getRevision() + 1));
        }

        /**
         * Reads the key, again every {@link #RECHECK_DELAY_MILLIS} while the read fails and the lease is watched:
         * gone or replaced, the lease is lost; there, {@code present} runs with the read.
         */
        private void readKey(Consumer<GetResponse> present) {
            CompletableFuture<GetResponse> read;
            try {
                read = client.getKVClient().get(key);
            } catch (RuntimeException closed) {
                return; // the client is closed: the session reports the loss
            }
            read.whenComplete((response, error) -> {
                synchronized (watchLock) {
                    if (unwatched) {
                        return;
                    }
                }
                if (error != null) {
                    // run by the delay's thread: the read is only sent, and the common pool may have one busy worker
                    CompletableFuture.delayedExecutor(RECHECK_DELAY_MILLIS, TimeUnit.MILLISECONDS, Runnable::run)
                            .execute(() -> readKey(present));
                    return;
                }
                List<KeyValue> kvs = response.getKvs();
                if (kvs.isEmpty() || kvs.get(0).getCreateRevision() != token().value()) {
                    markLost(this, true);
                } else {
                    present.accept(response);
                }
            });
        }

        /** The listener of one watch on the key. */
        private final class KeyWatch implements Watch.Listener {
            @Override
            public void onNext(WatchResponse response) {
                for (WatchEvent event : response.getEvents()) {
                    if (event.getEventType() == WatchEvent.EventType.DELETE) {
                        markLost(EtcdLease.this, true);
                        return;
                    }
                }
            }

            /**
             * jetcd resumes the watch after a transient error (or ends it: {@link #onCompleted()}), but from the
             * revision of the broken stream's "created" answer, so a deletion etcd had not yet sent on it would be
             * skipped: a read of the key finds it instead. The watch jetcd resumes stays.
             */
            @Override
            public void onError(Throwable error) {
                boolean current;
                synchronized (watchLock) {
                    current = !unwatched && watching == this;
                }
                if (current) {
                    readKey(response -> { });
                }
            }

            @Override
            public void onCompleted() {
                synchronized (watchLock) {
                    if (unwatched || watching != this) {
                        return; // stopped, or already replaced
                    }
                    watching = null;
                }
                recheck();
            }
        }

        /** Lets the next acquirer of this process ask etcd; once per lease, whether lost or released first. */
        void returnTurn() {
            if (turnReturned.compareAndSet(false, true)) {
                turn.release();
            }
        }
    }
}
