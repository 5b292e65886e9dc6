package dev.fencing.sample;

import dev.fencing.zookeeper.ZooKeeperTokenIssuer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;

import java.util.concurrent.TimeUnit;

/**
 * 3. A ZooKeeper lock whose token is the czxid of the lock node. Client 1's session really expires on the server
 * (as a pause past the session timeout makes it), which deletes its ephemeral lock node and hands the lock over.
 */
final class ZooKeeperStrategy implements Strategy {

    @Override
    public String name() {
        return "zookeeper";
    }

    @Override
    public Row run(SampleDatabase db, Options options, Progress progress) throws Throwable {
        TestingServer embedded = options.zookeeper() == null ? new TestingServer(true) : null;
        String connect = embedded != null ? embedded.getConnectString() : options.zookeeper();
        try (CuratorFramework c1 = client(connect); CuratorFramework c2 = client(connect)) {
            if (!c1.blockUntilConnected(5, TimeUnit.SECONDS) || !c2.blockUntilConnected(5, TimeUnit.SECONDS)) {
                return Row.skipped("ZooKeeper lock + czxid", true, "no ZooKeeper at " + connect);
            }
            try (ZooKeeperTokenIssuer issuer1 = new ZooKeeperTokenIssuer(c1, "/fencing-sample", null);
                 ZooKeeperTokenIssuer issuer2 = new ZooKeeperTokenIssuer(c2, "/fencing-sample", null)) {
                return IssuerRace.run("ZooKeeper lock + czxid", name(), db, issuer1, issuer2, "zk-accounts:42",
                        () -> c1.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration(),
                        "its session expires on the server ("
                                + (embedded != null ? "embedded ZooKeeper" : connect) + ")",
                        progress);
            }
        } finally {
            if (embedded != null) {
                embedded.close();
            }
        }
    }

    private static CuratorFramework client(String connect) {
        CuratorFramework client = CuratorFrameworkFactory.builder().connectString(connect)
                .retryPolicy(new ExponentialBackoffRetry(100, 3)).sessionTimeoutMs(4000)
                .connectionTimeoutMs(3000).build();
        client.start();
        return client;
    }
}
