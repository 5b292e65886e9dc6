package dev.fencing.zookeeper;

import dev.fencing.issuer.TokenIssuer;
import dev.fencing.testsupport.IssuerFloorsContract;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/** The ZooKeeper issuer as compaction uses it: one czxid sequence, so a family floor needs no raise. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ZooKeeperIssuerFloorsTest extends IssuerFloorsContract {

    private TestingServer server;
    private CuratorFramework client;
    private ZooKeeperTokenIssuer issuer;
    private ZooKeeperTokenIssuer other;

    @BeforeAll
    void start() throws Exception {
        server = new TestingServer(true);
        client = Clients.start(server.getConnectString());
        issuer = new ZooKeeperTokenIssuer(client, "/fencing-floors", null);
        other = new ZooKeeperTokenIssuer(client, "/fencing-floors", null);
    }

    @AfterAll
    void stop() throws Exception {
        issuer.close();
        other.close();
        client.close();
        server.close();
    }

    @Override
    protected TokenIssuer issuer() {
        return issuer;
    }

    /** A second issuer on the same service, as another process (or this one restarted) builds it. */
    @Override
    protected TokenIssuer otherIssuer() {
        return other;
    }
}
