package dev.fencing.zookeeper;

import dev.fencing.issuer.Lease;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.framework.state.ConnectionStateListenerManagerFactory;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.listen.StandardListenerManager;
import org.apache.curator.framework.listen.UnaryListenerManager;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.apache.curator.test.TestingZooKeeperServer;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Tokens stay monotonic through what real ZooKeeper deployments go through, and the fence stops the loser. */
class ZooKeeperFailureTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void monotonicAcrossARestartOfTheServer() throws Exception {
        try (TestingServer server = new TestingServer(true)) {
            long before;
            try (CuratorFramework client = Clients.start(server.getConnectString());
                 ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(client)) {
                Lease lease = issuer.acquire("restart", WAIT);
                before = lease.token().value();
                lease.close();
            }
            server.restart(); // same data directory, new process state
            try (CuratorFramework client = Clients.start(server.getConnectString());
                 ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(client)) {
                Lease lease = issuer.acquire("restart", WAIT);
                assertThat(lease.token().value()).isGreaterThan(before);
                lease.close();
            }
        }
    }

    @Test
    void monotonicAcrossARestartOfTheWholeEnsembleAndAServerKill() throws Exception {
        try (TestingCluster cluster = new TestingCluster(3)) {
            cluster.start();
            List<Long> tokens = new ArrayList<>();
            try (CuratorFramework client = Clients.start(cluster.getConnectString());
                 ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(client)) {
                tokens.add(acquireAndRelease(issuer));

                // kill the server this client talks to: the client fails over, tokens keep growing
                InstanceSpec connected = cluster.findConnectionInstance(client.getZookeeperClient().getZooKeeper());
                assertThat(cluster.killServer(connected)).isTrue();
                tokens.add(acquireAndReleaseOnceServing(issuer)); // it may have been the leader: an election follows
            }
            for (TestingZooKeeperServer member : cluster.getServers()) {
                member.stop();               // the whole ensemble goes down ...
            }
            for (TestingZooKeeperServer member : cluster.getServers()) {
                member.restart();            // ... and comes back on its data directories
            }
            try (CuratorFramework client = Clients.start(cluster.getConnectString());
                 ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(client)) {
                tokens.add(acquireAndRelease(issuer));
            }
            assertThat(tokens).isSorted().doesNotHaveDuplicates();
        }
    }

    @Test
    void killingTheLeaderKeepsTokensMonotonic() throws Exception {
        try (TestingCluster cluster = new TestingCluster(3)) {
            cluster.start();
            try (CuratorFramework client = Clients.start(cluster.getConnectString());
                 ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(client)) {
                long before = acquireAndRelease(issuer);
                InstanceSpec leader = cluster.getInstances().stream().filter(ZooKeeperFailureTest::isLeader)
                        .findFirst().orElseThrow();
                assertThat(cluster.killServer(leader)).isTrue();
                // the two left elect a leader; until then (and until the client reconnects) an acquire fails, loudly
                await(() -> cluster.getInstances().stream().filter(spec -> !spec.equals(leader))
                        .anyMatch(ZooKeeperFailureTest::isLeader));
                long after = acquireAndReleaseOnceServing(issuer);
                // a new leader means a new epoch: the high 32 bits of the zxid grew
                assertThat(after).isGreaterThan(before);
                assertThat(after >>> 32).isGreaterThan(before >>> 32);
            }
        }
    }

    @Test
    void afterSessionExpiryTheNextHolderIsLargerAndTheExpiredHoldersWriteIsRejected() throws Throwable {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        InMemoryFenceStore store = new InMemoryFenceStore();
        try (TestingServer server = new TestingServer(true);
             CuratorFramework zombieClient = Clients.start(server.getConnectString());
             CuratorFramework otherClient = Clients.start(server.getConnectString());
             ZooKeeperTokenIssuer zombieIssuer = new ZooKeeperTokenIssuer(zombieClient, "/locks", registry);
             ZooKeeperTokenIssuer otherIssuer = new ZooKeeperTokenIssuer(otherClient, "/locks", null)) {
            Lease zombie = zombieIssuer.acquire("accounts", WAIT);
            FencingToken zombieToken = zombie.token();
            store.fence("accounts", zombieToken, () -> "first write");

            // the zombie's session expires (a long pause): ZooKeeper deletes its ephemeral lock node
            zombieClient.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
            Lease next = otherIssuer.acquire("accounts", WAIT);
            assertThat(next.token().value()).isGreaterThan(zombieToken.value());
            // flagged first, counted right after on Curator's thread: wait for both
            await(() -> zombie.isLost() && registry.get("fencing.issuer.leases.lost").tag("issuer", "zookeeper")
                    .counter().count() >= 1);
            assertThat(registry.get("fencing.issuer.leases.lost").tag("issuer", "zookeeper").counter().count())
                    .isEqualTo(1);

            List<String> data = new ArrayList<>();
            store.fence("accounts", next.token(), () -> data.add("X"));
            assertThatThrownBy(() -> store.fence("accounts", zombieToken, () -> data.add("Y")))
                    .isInstanceOf(StaleTokenException.class);
            assertThat(data).containsExactly("X");

            zombie.close(); // releasing a lost lease is clean, and does not touch the new holder
            assertThat(next.isLost()).isFalse();
            assertThat(otherClient.checkExists().forPath(otherIssuer.lockPath(next))).isNotNull();
            next.close();
        }
    }

    /**
     * A process paused past its session timeout releases on waking, before Curator has told anyone the session
     * expired (its connection events run on a thread of their own; here they are held back, as the pause's aftermath
     * does in a real process). Curator's release swallows the missing node: the issuer still counts the lease lost,
     * once, from the node's session no longer being the client's.
     */
    @Test
    void aLeaseWhoseSessionExpiredUnnoticedIsCountedLostAtItsRelease() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        HeldEvents events = new HeldEvents();
        try (TestingServer server = new TestingServer(true);
             CuratorFramework zombieClient = Clients.start(server.getConnectString(), events);
             ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(zombieClient, "/locks", registry)) {
            CountDownLatch reconnected = new CountDownLatch(1);
            zombieClient.getConnectionStateListenable().addListener((client, state) -> {
                if (state == ConnectionState.RECONNECTED) {
                    reconnected.countDown();
                }
            });
            Lease zombie = issuer.acquire("accounts", WAIT);
            String lockPath = issuer.lockPath(zombie);
            events.hold();
            try {
                expireOnTheServer(server.getConnectString(), zombieClient);
                assertThat(events.waiting.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("an event held").isTrue();
                assertThat(zombie.isLost()).as("lost before the issuer heard").isFalse();

                zombie.close();

                assertThat(zombie.isLost()).as("lost, found at release").isTrue();
                assertThat(registry.get("fencing.issuer.leases.lost").tag("issuer", "zookeeper").counter().count())
                        .isEqualTo(1);
                assertThat(zombieClient.checkExists().forPath(lockPath)).isNull();
            } finally {
                events.open.countDown();
            }
            // the held events reach the issuer now, up to the new session's: the lease stays counted once
            assertThat(reconnected.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
            Lease next = issuer.acquire("accounts", WAIT);
            assertThat(next.token().value()).isGreaterThan(zombie.token().value());
            next.close();
            assertThat(next.isLost()).as("a release on the live session").isFalse();
            assertThat(registry.get("fencing.issuer.leases.lost").tag("issuer", "zookeeper").counter().count())
                    .isEqualTo(1);
        }
    }

    /**
     * A holder whose lock is lost while the whole ensemble is down releases: the release must not sit through
     * Curator's retries (a connection timeout per attempt; a new user's trial answered 14 s after the refusal, nothing
     * logged), yet the lock node must still go once the ensemble is back, and only this holder's. Before the fix,
     * close() waited here for two attempts of 10 s each.
     */
    @Test
    @Timeout(120)
    void releasingALeaseLostWhileTheEnsembleIsDownDoesNotWaitForCuratorsRetries() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (TestingServer server = new TestingServer(true);
             CuratorFramework zombieClient = slowRetrying(server.getConnectString());
             ZooKeeperTokenIssuer zombieIssuer = new ZooKeeperTokenIssuer(zombieClient, "/down-release", registry)) {
            Lease zombie = zombieIssuer.acquire("accounts", WAIT);
            String zombieNode = zombieIssuer.lockPath(zombie);
            server.stop();
            await(zombie::isLost); // SUSPENDED: the fence refuses its token from here on

            long millis = timeClose(zombie);

            assertThat(millis).as("close() of a lost lease with the ensemble down, in ms (the client's connection "
                    + "timeout is 10000)").isLessThan(5_000);
            assertThat(registry.get("fencing.issuer.leases.lost").tag("issuer", "zookeeper").counter().count())
                    .isEqualTo(1);
            server.restart(); // within the 30 s session: the node outlived the outage, the background delete takes it
            try (CuratorFramework otherClient = Clients.start(server.getConnectString());
                 ZooKeeperTokenIssuer otherIssuer = new ZooKeeperTokenIssuer(otherClient, "/down-release", null)) {
                await(() -> gone(otherClient, zombieNode));
                Lease next = otherIssuer.acquire("accounts", WAIT);
                assertThat(next.token().value()).isGreaterThan(zombie.token().value());
                String nextNode = otherIssuer.lockPath(next);
                assertThat(nextNode).isNotEqualTo(zombieNode);
                assertThat(otherClient.checkExists().forPath(nextNode)).isNotNull();
                assertThat(next.isLost()).isFalse();
                next.close();
            }
        }
    }

    /**
     * The same with the loss not yet reported when the holder releases (Curator's connection events held back, as a
     * busy event thread would): the client is not connected, so the release does not wait either, and counts the
     * lease lost (its session is in doubt) instead of throwing a failure to release. Before the fix, close() waited
     * for Curator's retries and then threw.
     */
    @Test
    @Timeout(120)
    void releasingWhileDisconnectedBeforeTheLossIsReportedDoesNotWaitAndCountsTheLeaseLost() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        HeldEvents events = new HeldEvents();
        try (TestingServer server = new TestingServer(true);
             CuratorFramework zombieClient = slowRetrying(server.getConnectString(), events);
             ZooKeeperTokenIssuer zombieIssuer = new ZooKeeperTokenIssuer(zombieClient, "/down-release", registry)) {
            Lease zombie = zombieIssuer.acquire("accounts", WAIT);
            String zombieNode = zombieIssuer.lockPath(zombie);
            events.hold();
            long millis;
            try {
                server.stop();
                await(() -> !zombieClient.getZookeeperClient().isConnected());
                assertThat(zombie.isLost()).as("the loss not reported yet").isFalse();

                millis = timeClose(zombie);

                assertThat(zombie.isLost()).as("counted lost at its release").isTrue();
            } finally {
                events.open.countDown();
            }
            assertThat(millis).as("close() while disconnected, in ms (the client's connection timeout is 10000)")
                    .isLessThan(5_000);
            assertThat(registry.get("fencing.issuer.leases.lost").tag("issuer", "zookeeper").counter().count())
                    .isEqualTo(1);
            server.restart();
            try (CuratorFramework otherClient = Clients.start(server.getConnectString())) {
                await(() -> gone(otherClient, zombieNode));
            }
        }
    }

    /**
     * The same for an acquire that fails after ZooKeeper granted the lock (here an injected failure, with the ensemble
     * gone meanwhile): giving the lock back must not hold the failing caller through Curator's retries either, and the
     * node must still go once the ensemble is back. Before the fix, the acquire threw after two attempts of 10 s.
     */
    @Test
    @Timeout(120)
    void anAcquireFailingAfterTheGrantWhileTheEnsembleIsDownDoesNotWaitToGiveTheLockBack() throws Exception {
        try (TestingServer server = new TestingServer(true);
             CuratorFramework client = slowRetrying(server.getConnectString());
             ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(client, "/down-give-back", null)) {
            issuer.afterGrant = resource -> {
                try {
                    server.stop();
                    await(() -> !client.getZookeeperClient().isConnected());
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                throw new IllegalStateException("injected after the grant");
            };
            long start = System.nanoTime();
            assertThatThrownBy(() -> issuer.acquire("accounts", WAIT))
                    .hasMessageContaining("injected after the grant");
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            issuer.afterGrant = r -> { };

            assertThat(millis).as("the failing acquire with the ensemble down, in ms (the client's connection "
                    + "timeout is 10000)").isLessThan(5_000);
            server.restart();
            try (CuratorFramework otherClient = Clients.start(server.getConnectString())) {
                await(() -> {
                    try {
                        return otherClient.getChildren().forPath("/down-give-back/accounts").isEmpty();
                    } catch (Exception notYet) {
                        return false;
                    }
                });
            }
        }
    }

    /** Whether {@code path} is gone; {@code false} while the client cannot tell yet. */
    private static boolean gone(CuratorFramework client, String path) {
        try {
            return client.checkExists().forPath(path) == null;
        } catch (Exception notYet) {
            return false;
        }
    }

    /** How long {@code lease.close()} took, in ms; it must not throw. */
    private static long timeClose(Lease lease) {
        long start = System.nanoTime();
        lease.close();
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    /** A client whose retried operations wait a 10 s connection timeout per attempt, two attempts; 30 s session. */
    private static CuratorFramework slowRetrying(String connectString) throws InterruptedException {
        return slowRetrying(connectString, null);
    }

    private static CuratorFramework slowRetrying(String connectString,
                                                 UnaryListenerManager<ConnectionStateListener> listeners)
            throws InterruptedException {
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder().connectString(connectString)
                .retryPolicy(new ExponentialBackoffRetry(100, 1))
                .sessionTimeoutMs(30_000).connectionTimeoutMs(10_000);
        if (listeners != null) {
            builder.connectionStateListenerManagerFactory(client -> listeners);
        }
        CuratorFramework client = builder.build();
        client.start();
        assertThat(client.blockUntilConnected(30, TimeUnit.SECONDS)).isTrue();
        return client;
    }

    /** Curator's connection listeners, whose events wait on its event thread from {@link #hold()} until opened. */
    private static final class HeldEvents implements UnaryListenerManager<ConnectionStateListener> {
        private final StandardListenerManager<ConnectionStateListener> listeners = StandardListenerManager.standard();
        private volatile boolean held;
        final CountDownLatch waiting = new CountDownLatch(1);
        final CountDownLatch open = new CountDownLatch(1);

        void hold() {
            held = true;
        }

        @Override
        public void forEach(Consumer<ConnectionStateListener> function) {
            if (held) {
                waiting.countDown();
                try {
                    open.await(WAIT.toSeconds(), TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            listeners.forEach(function);
        }

        @Override
        public void addListener(ConnectionStateListener listener) {
            listeners.addListener(listener);
        }

        @Override
        public void addListener(ConnectionStateListener listener, Executor executor) {
            listeners.addListener(listener, executor);
        }

        @Override
        public void removeListener(ConnectionStateListener listener) {
            listeners.removeListener(listener);
        }

        @Override
        public void clear() {
            listeners.clear();
        }

        @Override
        public int size() {
            return listeners.size();
        }
    }

    /**
     * Ends {@code client}'s session on the server, as its expiry during a pause does: another handle attaches to the
     * session and closes it, which deletes its ephemeral nodes; the client learns of it only when it next talks.
     */
    private static void expireOnTheServer(String connectString, CuratorFramework client) throws Exception {
        ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper killer = new ZooKeeper(connectString, 6_000, event -> {
            if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, zk.getSessionId(), zk.getSessionPasswd());
        try {
            assertThat(connected.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("attached to the session").isTrue();
        } finally {
            killer.close();
        }
    }

    @Test
    void czxidKeepsGrowingWhenTheLockParentIsDeletedAndRecreated() throws Exception {
        try (TestingServer server = new TestingServer(true);
             CuratorFramework client = Clients.start(server.getConnectString());
             ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(client, "/locks", null)) {
            Lease first = issuer.acquire("orders", WAIT);
            String firstNode = first.token().holder();
            first.close();
            client.delete().deletingChildrenIfNeeded().forPath("/locks/orders");
            client.create().creatingParentsIfNeeded().forPath("/locks/orders");
            Lease second = issuer.acquire("orders", WAIT);
            try {
                assertThat(second.token().value()).isGreaterThan(first.token().value());
                // the sequential suffix started over with the new parent: it would have gone backwards as a token
                assertThat(sequenceOf(second.token().holder())).isLessThanOrEqualTo(sequenceOf(firstNode));
            } finally {
                second.close();
            }
        }
    }

    /** Asks a member for its role with the {@code srvr} four-letter command (whitelisted by default). */
    private static boolean isLeader(InstanceSpec member) {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", member.getPort())) {
            socket.getOutputStream().write("srvr".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            String reply = new String(socket.getInputStream().readAllBytes(),
                    java.nio.charset.StandardCharsets.US_ASCII);
            return reply.contains("Mode: leader");
        } catch (java.io.IOException e) {
            return false;
        }
    }

    private static long sequenceOf(String lockPath) {
        return Long.parseLong(lockPath.substring(lockPath.length() - 10));
    }

    /**
     * {@link #acquireAndRelease}, tried again for up to 30 s while the ensemble still answers with a connection loss
     * (a client whose server was killed reconnects after the election): that is an acquire refused, not a token.
     */
    private static long acquireAndReleaseOnceServing(ZooKeeperTokenIssuer issuer) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                return acquireAndRelease(issuer);
            } catch (dev.fencing.issuer.LockAcquisitionException e) {
                if (!(e.getCause() instanceof org.apache.zookeeper.KeeperException.ConnectionLossException)
                        || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(200);
            }
        }
    }

    private static long acquireAndRelease(ZooKeeperTokenIssuer issuer) {
        Lease lease = issuer.acquire("cluster", WAIT);
        lease.close();
        return lease.token().value();
    }

    private static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within 30 s");
            }
            Thread.sleep(20);
        }
    }

    /**
     * The session is lost (Curator reports LOST, the issuer's listener runs) after ZooKeeper granted the lock and
     * before the lease is put into the issuer's held set (a GC pause there, simulated with the afterGrant seam).
     * Curator already said LOST, the lock node is gone and another client takes the lock, yet acquire hands out a
     * lease whose isLost() is false (a review found it; the watch reported it a second later).
     */
    @Test
    @Timeout(120)
    void aSessionLostBetweenTheGrantAndTheHeldSetIsReportedAtOnce() throws Exception {
        try (TestingServer server = new TestingServer(true);
             CuratorFramework zombieClient = Clients.start(server.getConnectString());
             CuratorFramework otherClient = Clients.start(server.getConnectString());
             ZooKeeperTokenIssuer zombieIssuer = new ZooKeeperTokenIssuer(zombieClient, "/grant-race", null);
             ZooKeeperTokenIssuer otherIssuer = new ZooKeeperTokenIssuer(otherClient, "/grant-race", null)) {
            CountDownLatch lost = new CountDownLatch(1);
            zombieClient.getConnectionStateListenable().addListener((c, state) -> {
                if (state == ConnectionState.LOST) {
                    lost.countDown(); // after the issuer's own listener (registered first) has run
                }
            });
            zombieIssuer.afterGrant = resource -> {
                try {
                    expireOnTheServer(server.getConnectString(), zombieClient);
                    assertThat(lost.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("Curator reported LOST").isTrue();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            };
            Lease zombie = zombieIssuer.acquire("accounts", WAIT);
            zombieIssuer.afterGrant = r -> { };
            boolean lostAtReturn = zombie.isLost();
            long returned = System.nanoTime();
            Lease next = otherIssuer.acquire("accounts", Duration.ofSeconds(5));
            boolean lostWhenNextGranted = zombie.isLost();
            while (!zombie.isLost() && System.nanoTime() - returned < TimeUnit.SECONDS.toNanos(10)) {
                Thread.sleep(5);
            }
            long reportedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - returned);
            System.out.println("grant race: zombie token " + zombie.token().value() + " isLost() at return = "
                    + lostAtReturn + "; next holder granted token " + next.token().value() + ", zombie isLost() then = "
                    + lostWhenNextGranted + "; zombie reported lost " + reportedAfter + " ms after acquire returned");
            next.close();
            zombie.close();
            assertThat(lostWhenNextGranted).as("the next holder was granted the lock while the zombie's lease, whose "
                    + "session Curator had already reported LOST, still said it was held").isTrue();
        }
    }

    /**
     * The application's CuratorFramework built with Curator's circuit-breaking connection state listeners
     * ({@link ConnectionStateListenerManagerFactory#circuitBreaking}, Curator's remedy for noisy networks). The issuer
     * learns of a lost session only from those listeners (its node watch ignored connection events), and a circuit
     * breaker forwards one LOST per open circuit: a second session expiry within the breaker's window, while a new
     * lease is held, was never reported; the lock node was gone, another client took the lock with a larger token, and
     * the holder's lease still said held (a red-team review). The node's watch now takes the session's expiry as a
     * loss.
     */
    @Test
    @Timeout(60)
    void aSecondSessionExpiryWithinTheCircuitBreakersWindowMarksTheNewLeaseLost() throws Exception {
        twoExpiries(true);
    }

    /** Control: the same two expiries on a client with Curator's standard listeners; this holds. */
    @Test
    @Timeout(60)
    void withStandardListenersTheSecondExpiryIsReported() throws Exception {
        twoExpiries(false);
    }

    private void twoExpiries(boolean circuitBreaking) throws Exception {
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                .connectString("placeholder")
                .retryPolicy(new ExponentialBackoffRetry(100, 5))
                .sessionTimeoutMs(6_000).connectionTimeoutMs(5_000);
        if (circuitBreaking) {
            builder.connectionStateListenerManagerFactory(
                    ConnectionStateListenerManagerFactory.circuitBreaking(new RetryOneTime(40_000)));
        }
        try (TestingServer server = new TestingServer(true);
             CuratorFramework zombieClient = builder.connectString(server.getConnectString()).build();
             CuratorFramework otherClient = Clients.start(server.getConnectString());
             ZooKeeperTokenIssuer zombieIssuer = new ZooKeeperTokenIssuer(zombieClient,
                     "/fencing-circuit-breaking", null);
             ZooKeeperTokenIssuer otherIssuer = new ZooKeeperTokenIssuer(otherClient,
                     "/fencing-circuit-breaking", null)) {
            zombieClient.start();
            assertThat(zombieClient.blockUntilConnected(20, TimeUnit.SECONDS)).isTrue();

            // round 1: a first session expiry (reported: it opens the circuit)
            Lease first = zombieIssuer.acquire("accounts", WAIT);
            long firstSession = zombieClient.getZookeeperClient().getZooKeeper().getSessionId();
            expireOnTheServer(server.getConnectString(), zombieClient);
            awaitNewSession(zombieClient, firstSession);
            await(first::isLost);
            first.close();

            // round 2, inside the breaker's window: a new lease, held long enough to be watched, then its session ends
            Lease zombie = zombieIssuer.acquire("accounts", WAIT);
            await(() -> zombieIssuer.watches(zombie) == 1);
            long secondSession = zombieClient.getZookeeperClient().getZooKeeper().getSessionId();
            expireOnTheServer(server.getConnectString(), zombieClient);
            awaitNewSession(zombieClient, secondSession);

            Lease next = otherIssuer.acquire("accounts", WAIT); // the node went with the session
            try {
                assertThat(next.token().value()).isGreaterThan(zombie.token().value());
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (!zombie.isLost() && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                System.out.println("rt-zkhz: circuitBreaking=" + circuitBreaking + ": zombie token "
                        + zombie.token().value() + " isLost()=" + zombie.isLost()
                        + " 5 s after the next holder got token " + next.token().value() + "; its node exists: "
                        + (otherClient.checkExists().forPath(zombieIssuer.lockPath(zombie)) != null));
                assertThat(zombie.isLost())
                        .as("the lease whose session expired (its node deleted, the lock handed to token %d) is "
                                + "known lost", next.token().value())
                        .isTrue();
            } finally {
                next.close();
                zombie.close();
            }
        }
    }

    private static void awaitNewSession(CuratorFramework client, long old) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            try {
                if (client.getZookeeperClient().isConnected()
                        && client.getZookeeperClient().getZooKeeper().getSessionId() != old
                        && client.checkExists().forPath("/") != null) {
                    return;
                }
            } catch (Exception retry) {
                // still reconnecting
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no new session within 20 s");
    }

    /**
     * An operator deletes a lock node that was held for less than a second (before the issuer watches it), the next
     * holder takes the lock, and the first holder releases. Curator's release swallows the missing node and the
     * session was unchanged, so the release did not count the loss: it was never reported (no isLost, no counter, no
     * warning), although the release had every means to see the node was gone (a red-team review).
     */
    @Test
    @Timeout(60)
    void aLockNodeDeletedByHandIsFoundAtReleaseEvenWithinTheFirstSecond() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (TestingServer server = new TestingServer(true);
             CuratorFramework client = Clients.start(server.getConnectString());
             CuratorFramework operator = Clients.start(server.getConnectString());
             ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(client, "/fencing-hand-deleted", registry);
             ZooKeeperTokenIssuer other = new ZooKeeperTokenIssuer(operator, "/fencing-hand-deleted", null)) {
            Lease zombie = issuer.acquire("r", WAIT);
            operator.delete().forPath(issuer.lockPath(zombie));        // "deleteall" of a lock that looked stuck
            Lease next = other.acquire("r", WAIT);
            assertThat(next.token().value()).isGreaterThan(zombie.token().value());
            zombie.close();                                               // within the first second
            boolean lost = zombie.isLost();
            double counted = registry.get("fencing.issuer.leases.lost").tag("issuer", "zookeeper").counter().count();
            next.close();
            assertThat(lost).as("its release found the lock node gone (another holder had the lock)").isTrue();
            assertThat(counted).isEqualTo(1);
        }
    }
}
