package dev.fencing.zookeeper;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.testsupport.Await;
import dev.fencing.testsupport.LogRecords;
import dev.fencing.testsupport.RemoteTokenIssuerContract;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The issuer contract on a real ZooKeeper server, in process. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ZooKeeperTokenIssuerTest extends RemoteTokenIssuerContract {

    private TestingServer server;
    private CuratorFramework client;
    private ZooKeeperTokenIssuer issuer;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private CuratorFramework unreachableClient;
    private CuratorFramework otherClient;
    private ZooKeeperTokenIssuer otherIssuer;

    @BeforeAll
    void start() throws Exception {
        server = new TestingServer(true);
        client = Clients.start(server.getConnectString());
        issuer = new ZooKeeperTokenIssuer(client, "/fencing-test", registry);
        otherClient = Clients.start(server.getConnectString());
        otherIssuer = new ZooKeeperTokenIssuer(otherClient, "/fencing-test", null);
    }

    @AfterAll
    void stop() throws Exception {
        issuer.close();
        client.close();
        otherIssuer.close();
        otherClient.close();
        if (unreachableClient != null) {
            unreachableClient.close();
        }
        server.close();
    }

    @Override
    protected TokenIssuer issuer() {
        return issuer;
    }

    @Override
    protected TokenIssuer otherIssuer() {
        return otherIssuer;
    }

    @Override
    protected void afterNextGrant(String resource, Runnable action) {
        issuer.afterGrant = once(resource, action);
    }

    /** Expires the client's session, as ZooKeeper does for a holder silent past its session timeout. */
    @Override
    protected void expire(Lease lease) throws Exception {
        client.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
    }

    @Override
    protected MeterRegistry registry() {
        return registry;
    }

    @Override
    protected TokenIssuer unreachableIssuer() {
        CuratorFramework nowhere = CuratorFrameworkFactory.builder().connectString("127.0.0.1:1")
                .retryPolicy(new ExponentialBackoffRetry(50, 1)).connectionTimeoutMs(1000)
                .sessionTimeoutMs(5000).build();
        nowhere.start();
        unreachableClient = nowhere;
        return new ZooKeeperTokenIssuer(nowhere, "/fencing-test", null);
    }

    @Override
    protected String unreachableServiceName() {
        return "127.0.0.1:1";
    }

    /**
     * Misuses a plain-Java trial met with Curator's or a misleading message: a base path without its leading slash
     * (Curator's bare "Path must start with / character"), and a client never started (reported as ZooKeeper not
     * reachable after the whole timeout).
     */
    @Test
    void aRelativeBasePathAndAClientNeverStartedAreNamed() {
        assertThatThrownBy(() -> new ZooKeeperTokenIssuer(client, "fencing/locks", null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("basePath 'fencing/locks'").hasMessageContaining("/fencing/locks");
        try (CuratorFramework latent = CuratorFrameworkFactory.newClient(server.getConnectString(),
                new ExponentialBackoffRetry(100, 1))) {
            ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(latent);
            assertThatThrownBy(() -> issuer.acquire("r", Duration.ofSeconds(5)))
                    .isInstanceOf(dev.fencing.issuer.LockAcquisitionException.class)
                    .hasMessageContaining("LATENT, not STARTED").hasMessageContaining("client.start()");
        }
    }

    @Test
    void tokenIsTheCzxidOfTheLockNodeAndHolderItsName() throws Exception {
        String resource = freshResource();
        Lease lease = issuer.acquire(resource, Duration.ofSeconds(10));
        String lockPath = issuer.lockPath(lease);
        try {
            assertThat(lockPath).isEqualTo("/fencing-test/" + resource + "/" + lease.token().holder());
            assertThat(lease.token().holder()).matches("_c_[0-9a-f-]{36}-lock-\\d{10}");
            assertThat(client.checkExists().forPath(lockPath).getCzxid()).isEqualTo(lease.token().value());
        } finally {
            lease.close();
        }
        assertThat(client.checkExists().forPath(lockPath)).isNull();
        assertThat(registry.get("fencing.issuer.acquisitions").tag("issuer", "zookeeper").tag("outcome", "acquired")
                .counter().count()).isPositive();
    }

    /**
     * A client started just before the probe is still connecting: the probe waits for it, up to the client's
     * connection timeout (a new user's trial: the starter started its client and a FencedLockRegistry bean probed it
     * at once, failing the start with "Not connected" while ZooKeeper was up, one start in three).
     */
    @Test
    void theProbeOfAClientStillConnectingWaitsForIt() throws Exception {
        for (int start = 0; start < 3; start++) {
            try (CuratorFramework connecting = CuratorFrameworkFactory.builder()
                    .connectString(server.getConnectString()).retryPolicy(new ExponentialBackoffRetry(100, 3))
                    .sessionTimeoutMs(6_000).connectionTimeoutMs(5_000).build()) {
                connecting.start();
                try (ZooKeeperTokenIssuer fresh = new ZooKeeperTokenIssuer(connecting)) {
                    fresh.probe();
                }
            }
        }
        CuratorFramework nowhere = CuratorFrameworkFactory.builder().connectString("127.0.0.1:1")
                .retryPolicy(new ExponentialBackoffRetry(50, 1)).connectionTimeoutMs(300).sessionTimeoutMs(5000)
                .build();
        try (nowhere; ZooKeeperTokenIssuer unreachable = new ZooKeeperTokenIssuer(nowhere)) {
            nowhere.start();
            assertThatThrownBy(unreachable::probe).hasMessageContaining("127.0.0.1:1")
                    .hasMessageContaining("within 300 ms");
        }
    }

    /** A chroot the ensemble does not have fails the probe (the health indicator) by name; once created, it passes. */
    @Test
    void aMissingChrootFailsTheProbe() throws Exception {
        String chroot = "/" + freshResource();
        try (CuratorFramework chrooted = Clients.start(server.getConnectString() + chroot);
             ZooKeeperTokenIssuer inChroot = new ZooKeeperTokenIssuer(chrooted, "/locks", null)) {
            assertThatThrownBy(inChroot::probe).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining(server.getConnectString() + chroot).hasMessageContaining("chroot");
            assertThatThrownBy(() -> inChroot.acquire("accounts", Duration.ofSeconds(5)))
                    .hasMessageContaining("does the connect string's chroot " + chroot + " exist?");
            client.create().forPath(chroot);
            inChroot.probe();
            Lease lease = inChroot.acquire("accounts", Duration.ofSeconds(10));
            lease.close();
        } finally {
            client.delete().deletingChildrenIfNeeded().forPath(chroot);
        }
    }

    /**
     * The startup check reads the ensemble's zxid (highestIssued) first: with a chroot that does not exist, its warning
     * said only "NoNode for /..." (a new user's trial), while the 503 and the health named the chroot.
     */
    @Test
    @Timeout(60)
    void aMissingChrootIsNamedWhenTheZxidIsRead() throws Exception {
        String chroot = "/" + freshResource();
        try (CuratorFramework chrooted = Clients.start(server.getConnectString() + chroot);
             ZooKeeperTokenIssuer inChroot = new ZooKeeperTokenIssuer(chrooted, "/locks", null)) {
            assertThatThrownBy(() -> inChroot.highestIssued("accounts")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("ZooKeeper at " + server.getConnectString() + chroot)
                    .hasMessageContaining("does the connect string's chroot " + chroot + " exist?");
        }
    }

    @Test
    void resourceNamesCannotEscapeTheBasePath() {
        assertThat(ZooKeeperTokenIssuer.nodeName("accounts:42")).isEqualTo("accounts:42");
        assertThat(ZooKeeperTokenIssuer.nodeName("../x/y")).isEqualTo("%2E%2E%2Fx%2Fy");
        assertThat(ZooKeeperTokenIssuer.nodeName("a b%")).isEqualTo("a%20b%25");
        Lease lease = issuer.acquire("../../zookeeper", Duration.ofSeconds(10));
        try {
            assertThat(issuer.lockPath(lease)).startsWith("/fencing-test/%2E%2E%2F%2E%2E%2Fzookeeper/");
        } finally {
            lease.close();
        }
    }

    @Test
    void longResourceNamesAreBoundedAndStayDistinct() throws Exception {
        String cjk = "锁".repeat(FencingToken.MAX_PART_LENGTH);               // 2304 chars once encoded
        String almost = "锁".repeat(FencingToken.MAX_PART_LENGTH - 1) + "钥";  // same 120-char prefix
        assertThat(ZooKeeperTokenIssuer.nodeName(cjk)).hasSizeLessThanOrEqualTo(ZooKeeperTokenIssuer.MAX_NODE_NAME)
                .contains("~").isNotEqualTo(ZooKeeperTokenIssuer.nodeName(almost));
        String ascii = "a".repeat(ZooKeeperTokenIssuer.MAX_NODE_NAME);           // at the bound: unchanged
        assertThat(ZooKeeperTokenIssuer.nodeName(ascii)).isEqualTo(ascii);
        assertThat(ZooKeeperTokenIssuer.nodeName(ascii + "b")).hasSize(120 + 1 + 64);
        assertThat(ZooKeeperTokenIssuer.nodeName("a" + "%".repeat(100)))     // an escape is never cut in two
                .startsWith("a" + "%25".repeat(39) + "~").hasSize(118 + 1 + 64);

        Lease onCjk = issuer.acquire(cjk, Duration.ofSeconds(10));   // the two hold their locks independently
        Lease onAlmost = issuer.acquire(almost, Duration.ofSeconds(2));
        try {
            assertThat(client.checkExists().forPath(issuer.lockPath(onCjk)).getCzxid())
                    .isEqualTo(onCjk.token().value());
        } finally {
            onAlmost.close();
            onCjk.close();
        }
    }

    /**
     * A lock node deleted by hand while it is held (an operator freeing a lock that looked stuck) lets the next
     * acquirer in: once the lease has been held for a second its node is watched, and the deletion marks the lease
     * lost at once, counted once and warned of, before its release, which stays quiet. A lease whose node's data
     * changed stays held and is watched again; the issuer's own releases are never lost.
     */
    @Test
    void aLockNodeDeletedByHandMarksItsLeaseLost() throws Exception {
        String r = freshResource();
        Lease watchedThenReleased = issuer.acquire(r, Duration.ofSeconds(10));
        Await.until(() -> issuer.watches(watchedThenReleased) == 1);
        watchedThenReleased.close(); // its own release deletes the watched node: not a loss
        double lostBefore = lost();
        try (LogRecords log = LogRecords.of(dev.fencing.issuer.AbstractTokenIssuer.class)) {
            Lease zombie = issuer.acquire(r, Duration.ofSeconds(10));
            String lockPath = issuer.lockPath(zombie);
            Await.until(() -> issuer.watches(zombie) == 1);
            client.setData().forPath(lockPath, "touched".getBytes(StandardCharsets.UTF_8));
            Await.until(() -> issuer.watches(zombie) == 2); // the data change spent the one-time watch
            assertThat(zombie.isLost()).as("a data change is no loss").isFalse();

            otherClient.delete().forPath(lockPath);
            Await.until(() -> zombie.isLost() && lost() == lostBefore + 1);
            assertThat(zombie.isHeld()).isFalse();
            assertThat(log.records()).anySatisfy(record -> assertThat(record.getMessage())
                    .contains("Lost the lock on '" + r + "'").contains("token " + zombie.token().value()));

            Lease next = otherIssuer.acquire(r, Duration.ofSeconds(10)); // the lock was free for the next one
            try {
                assertThat(next.token().value()).isGreaterThan(zombie.token().value());
                zombie.close();
                assertThat(zombie.isReleased()).isTrue();
                assertThat(client.checkExists().forPath(otherIssuer.lockPath(next)))
                        .as("the zombie's release leaves the new holder's node alone").isNotNull();
            } finally {
                next.close();
            }
        }
        assertThat(lost()).as("counted once").isEqualTo(lostBefore + 1);
        assertThat(watchedThenReleased.isLost()).isFalse();
    }

    private double lost() {
        return registry.find("fencing.issuer.leases.lost").tag("issuer", "zookeeper").counters().stream()
                .mapToDouble(io.micrometer.core.instrument.Counter::count).sum();
    }
}
