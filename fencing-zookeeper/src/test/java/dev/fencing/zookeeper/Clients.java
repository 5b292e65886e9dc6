package dev.fencing.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.listen.UnaryListenerManager;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.retry.ExponentialBackoffRetry;

import java.util.concurrent.TimeUnit;

final class Clients {
    private Clients() {
    }

    /** A started client, connected, with short timeouts suited to tests. */
    static CuratorFramework start(String connectString) throws InterruptedException {
        return start(connectString, null);
    }

    /** The same, its connection listeners kept by {@code listeners} when not null. */
    static CuratorFramework start(String connectString,
                                  UnaryListenerManager<ConnectionStateListener> listeners) throws InterruptedException {
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder().connectString(connectString)
                .retryPolicy(new ExponentialBackoffRetry(100, 5))
                .sessionTimeoutMs(6_000).connectionTimeoutMs(5_000);
        if (listeners != null) {
            builder.connectionStateListenerManagerFactory(client -> listeners);
        }
        CuratorFramework client = builder.build();
        client.start();
        if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no connection to " + connectString);
        }
        return client;
    }
}
