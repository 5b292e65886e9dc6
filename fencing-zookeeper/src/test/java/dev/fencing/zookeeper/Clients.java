package dev.fencing.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

import java.util.concurrent.TimeUnit;

final class Clients {
    private Clients() {
    }

    /** A started client, connected, with short timeouts suited to tests. */
    static CuratorFramework start(String connectString) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder().connectString(connectString)
                .retryPolicy(new ExponentialBackoffRetry(100, 5))
                .sessionTimeoutMs(6_000).connectionTimeoutMs(5_000).build();
        client.start();
        if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no connection to " + connectString);
        }
        return client;
    }
}
