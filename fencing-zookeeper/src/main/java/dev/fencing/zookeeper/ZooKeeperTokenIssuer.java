package dev.fencing.zookeeper;

import dev.fencing.issuer.AbstractLease;
import dev.fencing.issuer.AbstractTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.SequenceWatch;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.utils.PathUtils;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A {@link TokenIssuer} on ZooKeeper through Curator's {@link InterProcessMutex}. The token is the <b>czxid</b> of
 * the acquisition's lock znode: the id of the transaction that created it, ordered by Zab across the whole
 * ensemble, so it grows across sessions, leader changes, restarts and recreated parents. (The sequential suffix of
 * the node name is not used: it is a 32-bit counter per parent that wraps, and restarts when Curator's empty
 * container parent is removed.) The holder is the lock node's name, e.g.
 * {@code _c_0c5e9d1e-3f7b-4b8e-9a57-0d4a6c3e2f10-lock-0000000042}: unique per acquisition (Curator's protection id is
 * a fresh UUID per lock node) and at most 55 chars, whatever the resource and base path; the node lives under
 * {@code basePath/}{@link #nodeName(String) nodeName(resource)}.
 *
 * <p>Any resource a {@link FencingToken} accepts can be locked. A failure after the lock was granted (reading the
 * czxid, building the token, an interrupt) releases the lock node before the exception reaches the caller.
 *
 * <p>Connection state is watched: on {@code SUSPENDED} or {@code LOST} every lease held through this issuer is
 * marked lost (and counted), since the session, and with it the ephemeral lock node, may be gone; the fence then
 * protects the resource. So is the lock node of each lease held longer than a second: deleted by anything but the
 * release (by hand, to free a lock that looked stuck), its lease is marked lost (and counted) within a moment. A
 * release that finds the node's session expired before the client reported it (a process paused past its session
 * timeout) counts the lease lost then. Releasing a lost lease is quiet, and so is releasing while the client is not
 * connected (the lease is counted lost then): neither waits for ZooKeeper, Curator deletes the lock node in the
 * background once it can. An interrupt does not stop a release (the interrupt status is kept). Release from the
 * thread that acquired.
 *
 * <p>As {@link IssuedTokens}, for recovery: the ensemble's zxid now (one write) bounds every token issued, and a
 * resource is held while its lock directory has a lock node.
 */
public final class ZooKeeperTokenIssuer extends AbstractTokenIssuer<ZooKeeperTokenIssuer.ZooKeeperLease>
        implements IssuedTokens, IssuerFloors, AutoCloseable {

    /** Where lock nodes live unless configured otherwise. */
    public static final String DEFAULT_BASE_PATH = "/fencing/locks";

    private final CuratorFramework client;
    private final String basePath;
    private final StatKeepingDriver driver = new StatKeepingDriver();
    private final Set<ZooKeeperLease> held = ConcurrentHashMap.newKeySet();
    private final ConnectionStateListener listener = this::onConnectionStateChange;
    private final IssuedTokens issued;

    /**
     * The highest czxid (or probe zxid) this issuer has seen. Every lock node created after that reply arrived has a
     * larger czxid on the same ensemble; a smaller one means the ensemble's sequence went back, and its tokens are
     * refused (fail closed).
     */
    private final SequenceWatch zxids = new SequenceWatch(() -> "ZooKeeper at " + connectString(),
            "the ensemble's transaction ids", "restarted on an empty or older data dir, or another ensemble at this "
            + "address", zxid -> "zxid 0x" + Long.toHexString(zxid));

    /**
     * Test seam, package-private: runs with the resource right after the lock was granted and before the lease is
     * returned, so a test can inject a failure there. Does nothing unless a test in this package sets it.
     */
    volatile Consumer<String> afterGrant = resource -> { };

    /**
     * @param client   a started Curator client
     * @param basePath the parent path of all lock nodes
     * @param registry for the issuer's counters, or {@code null}
     */
    public ZooKeeperTokenIssuer(CuratorFramework client, String basePath, MeterRegistry registry) {
        super(registry, "zookeeper", false); // zxids guards its one sequence for all resources
        this.client = Objects.requireNonNull(client, "client");
        this.basePath = validBasePath(Objects.requireNonNull(basePath, "basePath"));
        this.issued = new ZooKeeperIssuedTokens(client, this.basePath);
        client.getConnectionStateListenable().addListener(listener);
    }

    /** Curator's path check, with a message that names the issuer's parameter. */
    private static String validBasePath(String basePath) {
        try {
            return PathUtils.validatePath(basePath);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("ZooKeeperTokenIssuer basePath '" + basePath + "' is not a ZooKeeper "
                    + "path (" + e.getMessage() + "); an absolute path such as " + DEFAULT_BASE_PATH, e);
        }
    }

    public ZooKeeperTokenIssuer(CuratorFramework client) {
        this(client, DEFAULT_BASE_PATH, null);
    }

    @Override
    protected ZooKeeperLease doAcquire(String resource, Duration timeout, Grant grant) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        // read before the lock node is created: that node's czxid must be above every one seen before
        long seenBefore = zxids.seen();
        if (client.getState() != CuratorFrameworkState.STARTED) { // LATENT would wait out the timeout as unreachable
            throw new IllegalStateException("The Curator client for ZooKeeper at " + connectString() + " is "
                    + client.getState() + ", not STARTED: call client.start() before acquiring");
        }
        try {
            if (!client.getZookeeperClient().isConnected()
                    && !client.blockUntilConnected((int) Math.max(1, timeout.toMillis()), TimeUnit.MILLISECONDS)) {
                throw new LockAcquisitionException(resource, "ZooKeeper at " + connectString() + " is not reachable: "
                        + "no connection within " + timeout.toMillis() + " ms to lock resource '" + resource + "'");
            }
            Mutex mutex = new Mutex(client, ZKPaths.makePath(basePath, nodeName(resource)), driver);
            long left = Math.max(0, deadline - System.nanoTime());
            driver.created.remove();
            if (!mutex.acquire(left, TimeUnit.NANOSECONDS)) {
                throw new LockAcquisitionException(resource, "Timed out after " + timeout.toMillis()
                        + " ms waiting for the ZooKeeper lock on resource '" + resource + "' ("
                        + connectString() + ")");
            }
            grant.granted(() -> giveBack(mutex)); // from here on, every failure gives the lock back
            String lockPath = mutex.lockPath();
            Created node = nodeOf(lockPath);
            zxids.accept(node.czxid(), seenBefore, false, "the lock node of resource '" + resource + "' created at");
            afterGrant.accept(resource);
            ZooKeeperLease lease = new ZooKeeperLease(
                    new FencingToken(resource, node.czxid(), ZKPaths.getNodeFromPath(lockPath)), mutex, lockPath,
                    node.owner());
            held.add(lease);
            if (!sessionStillOwns(node)) {
                markLost(lease, true); // lost or suspended between the grant and the line above: no event comes now
            }
            WATCH_LATER.execute(() -> {
                if (held.contains(lease)) {
                    watchNode(lease);
                }
            });
            return lease;
        } finally {
            driver.created.remove();
        }
    }

    @Override
    protected LockAcquisitionException failure(String resource, Duration timeout, Exception cause) {
        String connectString = connectString();
        return new LockAcquisitionException(resource, "Could not lock resource '" + resource
                + "' on ZooKeeper at " + connectString + ": " + cause + chrootHint(cause, connectString), cause);
    }

    /**
     * A missing chroot fails every create under it with NoNode for the path below it, which does not name it: the
     * question to ask when {@code cause} is a NoNode and {@code connectString} has a chroot, else the empty string.
     */
    static String chrootHint(Exception cause, String connectString) {
        return cause instanceof KeeperException.NoNodeException && connectString.contains("/")
                ? " (does the connect string's chroot " + connectString.substring(connectString.indexOf('/'))
                + " exist? ZooKeeper does not create it)" : "";
    }

    /**
     * Releases a lock that was granted and is not handed out; when that fails, asks Curator for a guaranteed delete
     * in the background (retried until it succeeds or the session ends) and throws the first failure. With the client
     * not connected, asks for that delete at once rather than wait through Curator's retries first (the acquire is
     * failing either way); the path names this acquisition's node only.
     */
    private void giveBack(Mutex granted) throws Exception {
        String lockPath = granted.lockPath();
        if (lockPath != null && !client.getZookeeperClient().isConnected()) {
            client.delete().guaranteed().inBackground().forPath(lockPath);
            return;
        }
        try {
            granted.release();
        } catch (Exception e) {
            if (lockPath != null) {
                try {
                    client.delete().guaranteed().inBackground().forPath(lockPath);
                } catch (Exception again) {
                    e.addSuppressed(again);
                }
            }
            throw e;
        }
    }

    /**
     * Fails unless the Curator client is started and connected to ZooKeeper (waiting up to the client's connection
     * timeout for a client still connecting), and the ensemble answers a read of
     * the client's root within the client's connection timeout, finding it: a chroot in the connect string that does
     * not exist (ZooKeeper does not create it) would fail every lock.
     *
     * @throws IllegalStateException naming the connect string and the client's state
     */
    @Override
    public void probe() {
        String back = zxids.wentBack();
        if (back != null) { // every acquisition is refused until a restart: the issuer is down, not the ensemble
            throw new IllegalStateException(back);
        }
        if (client.getState() != CuratorFrameworkState.STARTED) {
            throw new IllegalStateException("The Curator client for ZooKeeper at " + connectString() + " is "
                    + client.getState() + ", not STARTED" + (client.getState() == CuratorFrameworkState.LATENT
                    ? ": call client.start()" : ""));
        }
        if (!client.getZookeeperClient().isConnected()) {
            // a client started just before (the starter's, at startup) is still connecting: wait for it as a lock
            // would, up to the client's connection timeout, rather than fail a start that races its handshake
            int wait = Math.max(1, client.getZookeeperClient().getConnectionTimeoutMs());
            boolean connected;
            try {
                connected = client.blockUntilConnected(wait, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted while connecting to ZooKeeper at " + connectString(), e);
            }
            if (!connected) {
                throw new IllegalStateException("Not connected to ZooKeeper at " + connectString() + " within "
                        + wait + " ms (the client's connection timeout): new locks cannot be granted and held "
                        + "leases are marked lost");
            }
        }
        Stat root;
        try {
            root = client.checkExists().forPath("/");
        } catch (Exception e) {
            throw new IllegalStateException("ZooKeeper at " + connectString() + " did not answer a read: " + e, e);
        }
        if (root == null) {
            throw new IllegalStateException("ZooKeeper at " + connectString() + " has no node at the connect string's "
                    + "chroot, which ZooKeeper does not create: no lock can be granted; create it, or fix the connect "
                    + "string");
        }
    }

    /**
     * Its ensemble (the client's connect string), the parent path of its lock nodes and, once the client has
     * connected, the session timeout the ensemble granted ({@code sessionTimeout}, e.g. {@code PT20S}): the server
     * bounds what the client asks for, and it is the granted one after which a paused holder's lock nodes go.
     */
    @Override
    public Map<String, Object> describe() {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("connectString", connectString());
        details.put("basePath", basePath);
        int negotiated;
        try {
            negotiated = client.getZookeeperClient().getZooKeeper().getSessionTimeout(); // 0 until connected
        } catch (Exception notStarted) {
            negotiated = 0;
        }
        if (negotiated > 0) {
            details.put("sessionTimeout", Duration.ofMillis(negotiated).toString());
        }
        return details;
    }

    /** The ensemble's zxid now: above the czxid of every lock node created before (one write to read it). */
    @Override
    public long highestIssued(String resource) {
        long seenBefore = zxids.seen();
        long highest = issued.highestIssued(resource);
        zxids.accept(highest, seenBefore, false, "the probe node created at"); // a created node moves the zxid
        return highest;
    }

    /**
     * A checked no-op: every token comes from one sequence for all resources, the
     * czxid (the ensemble's transaction id when the lock node was created), so every token issued from now on is larger
     * than every token issued before, for any resource, whatever floor a fence store folded a family into (as
     * {@link IssuerFloors#ONE_SEQUENCE}). A fence store's compaction may be given this issuer directly.
     *
     * @throws IllegalArgumentException when {@code family} is blank or {@code floor} negative
     */
    @Override
    public void raiseFamilyFloor(String family, long floor) {
        IssuerFloors.checkArguments("ZooKeeperTokenIssuer.raiseFamilyFloor", family, floor);
    }

    @Override
    public boolean isHeld(String resource) {
        return issued.isHeld(resource);
    }

    /** Every lock node's czxid must be above {@code token} (see {@link IssuedTokens#requireAbove}). */
    @Override
    public void requireAbove(long token, String source) {
        zxids.floor(token, source);
    }

    /** {@code true}: every token comes from one sequence for all resources, the ensemble's zxid. */
    @Override
    public boolean oneSequence() {
        return true;
    }

    /**
     * Deletes the lock node; {@code false} when it was gone already: the session took it with it (a node's session
     * that is no longer the client's expired, as for a process paused past its session timeout, which may release
     * before Curator reports the loss), or it was deleted by hand and the next holder may have the lock. The node is
     * deleted directly, not through the acquisition's own mutex, whose release swallows a missing node (a node
     * deleted within the first second, before its watch, went unreported); the mutex is the acquisition's alone.
     *
     * <p>A lease already lost, or released while the client is not connected (the lease is then counted lost: its
     * session is in doubt, as the connection listener would have said), hands the delete to Curator in the background
     * ({@code guaranteed()}: retried until it succeeds or the session ends) and returns at once: waiting changes
     * nothing for the caller, whose lease is lost either way, and a synchronous delete sat through Curator's retries
     * (a connection timeout per attempt) while the ensemble was down. The path names this acquisition's node only
     * (Curator's protection id is a fresh UUID per lock node), so a late delete never touches a newer holder's node.
     */
    @Override
    protected boolean doRelease(ZooKeeperLease zk) throws Exception {
        held.remove(zk);
        if (zk.isLost() || !client.getZookeeperClient().isConnected()) {
            client.delete().guaranteed().inBackground().forPath(zk.lockPath);
            return false; // lost already (not counted again), or in doubt now: counted lost at release
        }
        try {
            client.delete().guaranteed().forPath(zk.lockPath);
        } catch (KeeperException.NoNodeException gone) {
            return false; // the session ended and took the ephemeral node with it: nothing left to release
        }
        return !sessionEnded(zk.owner);
    }

    /** Whether the client's session is no longer {@code owner} (an unknown session id, 0, tells nothing). */
    private boolean sessionEnded(long owner) {
        try {
            return owner != 0 && client.getZookeeperClient().getZooKeeper().getSessionId() != owner;
        } catch (Exception unknown) {
            return false; // the client is closing: the release went through, and nothing says the lease was lost
        }
    }

    /**
     * Whether the client is connected now, in the session that owns the lock node: the connection listener marks only
     * the leases already held, so a session suspended or lost between the grant and the lease's entry into the held
     * set would otherwise go unreported until the node's watch (a second later).
     */
    private boolean sessionStillOwns(Created node) {
        try {
            return client.getZookeeperClient().isConnected()
                    && client.getZookeeperClient().getZooKeeper().getSessionId() == node.owner();
        } catch (Exception e) {
            return false;
        }
    }

    /** Detaches from the client's connection events; leases still held are marked lost. */
    @Override
    public void close() {
        client.getConnectionStateListenable().removeListener(listener);
        for (ZooKeeperLease lease : held) {
            markLost(lease, false);
        }
    }

    private void onConnectionStateChange(CuratorFramework source, ConnectionState state) {
        if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
            for (ZooKeeperLease lease : held) {
                markLost(lease, true);
            }
        }
    }

    /**
     * How long a lease is held before its lock node is watched: a lock held for a request or two is given back before
     * anyone could think it stuck, and watching every grant (one more request and one more event per lock) measured
     * 1.19-1.21x the raw mutex's acquire and release, against 1.01-1.06x without (docs/benchmarks.md).
     */
    static final long WATCH_AFTER_MILLIS = 1000;

    /** Runs a lease's watch after {@link #WATCH_AFTER_MILLIS}, on the JDK's delay thread (the watch is only sent). */
    private static final Executor WATCH_LATER =
            CompletableFuture.delayedExecutor(WATCH_AFTER_MILLIS, TimeUnit.MILLISECONDS, Runnable::run);

    /**
     * Watches the lease's lock node for its deletion while it is held: a node deleted by hand (an operator freeing a
     * lock that looked stuck) or by anything but this issuer's release lets the next acquirer in, so the lease is
     * marked lost at once (counted, warned), as a lost session does. Sent in the background; a node found already
     * gone marks the lease lost too; a watch that cannot be sent leaves the loss to the session's listener.
     */
    private void watchNode(ZooKeeperLease lease) {
        try {
            client.checkExists().usingWatcher((Watcher) event -> onNodeEvent(lease, event))
                    .inBackground((c, answer) -> {
                        if (answer.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                            nodeGone(lease);
                        } else if (answer.getResultCode() == KeeperException.Code.OK.intValue()) {
                            lease.watches.incrementAndGet();
                        }
                    }).forPath(lease.lockPath);
        } catch (Exception unsent) {
            // the client is closing, or ZooKeeper is unreachable: the session's loss, or the release, tells
        }
    }

    private void onNodeEvent(ZooKeeperLease lease, WatchedEvent event) {
        switch (event.getType()) {
            case NodeDeleted -> nodeGone(lease);
            case None -> {
                // a connection event: the connection listener judges the session, but a client whose connection
                // state listeners are filtered (Curator's circuit breaking forwards one LOST per open circuit) may
                // never tell it; the watch is told the session expired all the same
                if (event.getState() == Watcher.Event.KeeperState.Expired) {
                    nodeGone(lease);
                }
            }
            default -> {     // the node's data changed (a one-time watch is spent): watch it again while held
                if (held.contains(lease)) {
                    watchNode(lease);
                }
            }
        }
    }

    /** The lease's node is gone while it is held here: lost (a release takes the lease out of {@link #held} first). */
    private void nodeGone(ZooKeeperLease lease) {
        if (held.contains(lease)) {
            markLost(lease, true);
        }
    }

    /** The lock node's czxid and session, from the create's reply or, when Curator recovered the node, a read. */
    private Created nodeOf(String lockPath) throws Exception {
        Created created = driver.created.get();
        if (created != null && created.path().equals(lockPath) && created.czxid() > 0) {
            return created;
        }
        Stat stat = client.checkExists().forPath(lockPath); // protected-mode recovery found the node: ask for it
        if (stat == null) {
            throw new IllegalStateException("lock node " + lockPath + " vanished right after it was acquired");
        }
        return new Created(lockPath, stat.getCzxid(), stat.getEphemeralOwner());
    }

    private String connectString() {
        return client.getZookeeperClient().getCurrentConnectionString();
    }

    /** Longest lock directory name: a longer escaped resource is shortened and completed by its hash. */
    static final int MAX_NODE_NAME = 200;

    /**
     * One znode name per resource: the resource percent-encoded (UTF-8) outside {@code A-Z a-z 0-9 _ : -}, so no
     * resource can escape the base path or collide with another. An encoded name longer than {@value #MAX_NODE_NAME}
     * chars (a long resource, or one in a non-Latin script: up to 9 chars per UTF-16 unit) becomes its first 120
     * chars, {@code ~} and the SHA-256 of the resource in hex: bounded, and still one name per resource ({@code ~}
     * never appears in an encoded name). Names up to the bound are unchanged from earlier versions.
     */
    static String nodeName(String resource) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte b : resource.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xFF;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '_' || c == ':' || c == '-') {
                out.write(c);
            } else {
                out.writeBytes(String.format("%%%02X", c).getBytes(StandardCharsets.US_ASCII));
            }
        }
        String encoded = out.toString(StandardCharsets.US_ASCII);
        if (encoded.length() <= MAX_NODE_NAME) {
            return encoded;
        }
        int cut = 120;
        if (encoded.charAt(cut - 1) == '%') {        // never cut an escape in two
            cut -= 1;
        } else if (encoded.charAt(cut - 2) == '%') {
            cut -= 2;
        }
        return encoded.substring(0, cut) + "~" + HexFormat.of().formatHex(sha256(resource));
    }

    private static byte[] sha256(String resource) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(resource.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e); // every JVM must have it
        }
    }

    /** How many watches ZooKeeper has set on the lock node of a lease from this issuer. */
    int watches(Lease lease) {
        return ((ZooKeeperLease) lease).watches.get();
    }

    /** The full path of the lock node of a lease from this issuer. */
    String lockPath(Lease lease) {
        return ((ZooKeeperLease) lease).lockPath;
    }

    /** Exposes the lock path Curator keeps per thread. */
    static final class Mutex extends InterProcessMutex {
        Mutex(CuratorFramework client, String path, StatKeepingDriver driver) {
            super(client, path, driver);
        }

        String lockPath() {
            return getLockPath();
        }
    }

    /**
     * Curator's standard driver, creating the lock node with its {@link Stat} so the czxid comes with the create
     * reply instead of costing another round trip.
     */
    private static final class StatKeepingDriver extends StandardLockInternalsDriver {
        /** The create runs on the acquiring thread: its result waits there until the acquire returns. */
        final ThreadLocal<Created> created = new ThreadLocal<>();

        @Override
        public String createsTheLock(CuratorFramework client, String path, byte[] lockNodeBytes) throws Exception {
            Stat stat = new Stat();
            String ourPath = client.create().storingStatIn(stat).creatingParentContainersIfNeeded().withProtection()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .forPath(path, lockNodeBytes == null ? new byte[0] : lockNodeBytes);
            created.set(new Created(ourPath, stat.getCzxid(), stat.getEphemeralOwner()));
            return ourPath;
        }
    }

    /** A lock node: its path, czxid, and the session that owns it (ephemeral). */
    private record Created(String path, long czxid, long owner) {
    }

    /** A lease of this issuer: its lock node, the mutex that created it, and the session that owns the node. */
    final class ZooKeeperLease extends AbstractLease {
        final Mutex mutex;
        final String lockPath;
        final long owner;
        /** How many watches on its lock node ZooKeeper has set; for tests. */
        final AtomicInteger watches = new AtomicInteger();

        ZooKeeperLease(FencingToken token, Mutex mutex, String lockPath, long owner) {
            super(ZooKeeperTokenIssuer.this, token);
            this.mutex = mutex;
            this.lockPath = lockPath;
            this.owner = owner;
        }
    }
}
