package dev.fencing.zookeeper;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.RemoteTokenIssuerContract;
import dev.fencing.issuer.TokenIssuer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The issuer contract on a real ZooKeeper server, in process. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ZooKeeperTokenIssuerTest extends RemoteTokenIssuerContract {

    private TestingServer server;
    private CuratorFramework client;
    private ZooKeeperTokenIssuer issuer;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private CuratorFramework unreachableClient;

    @BeforeAll
    void start() throws Exception {
        server = new TestingServer(true);
        client = Clients.start(server.getConnectString());
        issuer = new ZooKeeperTokenIssuer(client, "/fencing-test", registry);
    }

    @AfterAll
    void stop() throws Exception {
        issuer.close();
        client.close();
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
    protected TokenIssuer unreachableIssuer() {
        CuratorFramework nowhere = CuratorFrameworkFactory.builder().connectString("127.0.0.1:1")
                .retryPolicy(new ExponentialBackoffRetry(50, 1)).connectionTimeoutMs(1000).sessionTimeoutMs(5000).build();
        nowhere.start();
        unreachableClient = nowhere;
        return new ZooKeeperTokenIssuer(nowhere, "/fencing-test", null);
    }

    @Override
    protected String unreachableServiceName() {
        return "127.0.0.1:1";
    }

    @Test
    void tokenIsTheCzxidOfTheLockNodeAndHolderItsPath() throws Exception {
        Lease lease = issuer.acquire(freshResource(), Duration.ofSeconds(10));
        try {
            assertThat(lease.token().holder()).startsWith("/fencing-test/");
            assertThat(client.checkExists().forPath(lease.token().holder()).getCzxid()).isEqualTo(lease.token().value());
        } finally {
            issuer.release(lease);
        }
        assertThat(client.checkExists().forPath(lease.token().holder())).isNull();
        assertThat(registry.get("fencing.issuer.acquisitions").tag("issuer", "zookeeper").tag("outcome", "acquired")
                .counter().count()).isPositive();
    }

    @Test
    void resourceNamesCannotEscapeTheBasePath() {
        assertThat(ZooKeeperTokenIssuer.nodeName("accounts:42")).isEqualTo("accounts:42");
        assertThat(ZooKeeperTokenIssuer.nodeName("../x/y")).isEqualTo("%2E%2E%2Fx%2Fy");
        assertThat(ZooKeeperTokenIssuer.nodeName("a b%")).isEqualTo("a%20b%25");
        Lease lease = issuer.acquire("../../zookeeper", Duration.ofSeconds(10));
        try {
            assertThat(lease.token().holder()).startsWith("/fencing-test/%2E%2E%2F%2E%2E%2Fzookeeper/");
        } finally {
            issuer.release(lease);
        }
    }
}
