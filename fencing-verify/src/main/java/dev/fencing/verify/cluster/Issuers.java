package dev.fencing.verify.cluster;

import dev.fencing.etcd.EtcdTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.zookeeper.ZooKeeperTokenIssuer;
import io.etcd.jetcd.Client;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The token issuers a client process of the harness uses, built on their own clients the way an application builds
 * them: {@link #zookeeper} on a Curator client, {@link #etcd} on a jetcd client. Each comes as a {@link Handle} that
 * closes the issuer and then its client.
 */
public final class Issuers {

    /** How long {@link #zookeeper} waits for the first connection. */
    static final Duration CONNECT_WAIT = Duration.ofSeconds(30);

    private Issuers() {
    }

    /** An issuer and what closes it together with its client. */
    public static final class Handle<T extends TokenIssuer> implements AutoCloseable {
        private final T issuer;
        private final AutoCloseable closeIssuer;
        private final AutoCloseable closeClient;
        private boolean closed;

        Handle(T issuer, AutoCloseable closeIssuer, AutoCloseable closeClient) {
            this.issuer = issuer;
            this.closeIssuer = closeIssuer;
            this.closeClient = closeClient;
        }

        public T issuer() {
            return issuer;
        }

        /** Closes the issuer (its leases still held are marked lost), then the client; idempotent. */
        @Override
        public synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            RuntimeException failure = null;
            try {
                closeIssuer.close();
            } catch (Exception e) {
                failure = new IllegalStateException("closing the issuer failed: " + e, e);
            }
            try {
                closeClient.close();
            } catch (Exception e) {
                if (failure == null) {
                    failure = new IllegalStateException("closing the client failed: " + e, e);
                } else {
                    failure.addSuppressed(e);
                }
            }
            if (failure != null) {
                throw failure;
            }
        }
    }

    /**
     * A {@link ZooKeeperTokenIssuer} (lock nodes under {@link ZooKeeperTokenIssuer#DEFAULT_BASE_PATH}) on a started
     * Curator client connected to the ensemble, with the given session timeout (the server bounds it: 1 to 60 s for
     * {@link ZooKeeperEnsemble}); the connection timeout is the session timeout, at most 15 s, and operations are
     * retried with exponential backoff (100 ms, 3 times). Waits up to 30 s for the first connection.
     *
     * @param connectString  e.g. {@link ZooKeeperEnsemble#clientAddress()}
     * @param sessionTimeout how long the ensemble keeps the session (and the lock nodes) of a silent client
     * @throws LockServiceException when no connection is made in time (the client is closed again)
     */
    public static Handle<ZooKeeperTokenIssuer> zookeeper(String connectString, Duration sessionTimeout) {
        Objects.requireNonNull(connectString, "connectString");
        int sessionMillis = Math.toIntExact(sessionTimeout.toMillis());
        CuratorFramework client = CuratorFrameworkFactory.builder().connectString(connectString)
                .sessionTimeoutMs(sessionMillis).connectionTimeoutMs(Math.min(sessionMillis, 15_000))
                .retryPolicy(new ExponentialBackoffRetry(100, 3)).build();
        try {
            client.start();
            if (!client.blockUntilConnected((int) CONNECT_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new LockServiceException("no connection to ZooKeeper at " + connectString + " within "
                        + CONNECT_WAIT.toSeconds() + " s");
            }
            ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(client);
            return new Handle<>(issuer, issuer, client);
        } catch (InterruptedException e) {
            client.close();
            Thread.currentThread().interrupt();
            throw new LockServiceException("interrupted while connecting to ZooKeeper at " + connectString, e);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /**
     * An {@link EtcdTokenIssuer} (lock keys under {@link EtcdTokenIssuer#DEFAULT_PREFIX}) on a jetcd client of the
     * given endpoints; its locks are bound to a session lease with the given time-to-live (at least 1 s), which it
     * keeps alive. jetcd connects lazily: the first acquire makes the connection.
     *
     * @param endpoints comma-separated, e.g. {@link EtcdCluster#clientAddress()}
     * @param ttl       how long etcd keeps the session lease (and the locks) of a silent client
     */
    public static Handle<EtcdTokenIssuer> etcd(String endpoints, Duration ttl) {
        Objects.requireNonNull(endpoints, "endpoints");
        String[] list = Arrays.stream(endpoints.split(",")).map(String::trim).filter(s -> !s.isEmpty())
                .toArray(String[]::new);
        if (list.length == 0) {
            throw new IllegalArgumentException("no etcd endpoint in '" + endpoints + "'");
        }
        Client client = Client.builder().endpoints(list).connectTimeout(Duration.ofSeconds(2)).build();
        try {
            EtcdTokenIssuer issuer = new EtcdTokenIssuer(client, String.join(",", list),
                    EtcdTokenIssuer.DEFAULT_PREFIX, ttl, null);
            return new Handle<>(issuer, issuer, client);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }
}
