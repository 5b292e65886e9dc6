package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.zookeeper.ZooKeeperTokenIssuer;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.zookeeper.client.ConnectStringParser;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * With {@code fencing.issuer.type=zookeeper} and fencing-zookeeper on the classpath: a {@link ZooKeeperTokenIssuer}
 * on the application's {@link CuratorFramework} bean when it has one, otherwise on a Curator client the starter
 * creates from {@code fencing.issuer.zookeeper.connect-string} (and closes on shutdown). Backs off when the
 * application defines its own {@link TokenIssuer}.
 */
@AutoConfiguration(after = FencingAutoConfiguration.class)
@ConditionalOnClass({ZooKeeperTokenIssuer.class, CuratorFramework.class})
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
@ConditionalOnFencingType(issuer = FencingProperties.IssuerType.ZOOKEEPER)
@EnableConfigurationProperties(FencingProperties.class)
public class FencingZooKeeperAutoConfiguration {

    static final String CONNECT_STRING = "fencing.issuer.zookeeper.connect-string";

    static final String SESSION_TIMEOUT = "fencing.issuer.zookeeper.session-timeout";

    /** The name of the Curator client the starter creates when the application has none. */
    static final String STARTERS_CLIENT = "fencingCuratorFramework";

    @Bean
    @ConditionalOnMissingBean(TokenIssuer.class)
    ZooKeeperTokenIssuer tokenIssuer(CuratorFramework curator, FencingProperties properties,
                                     ObjectProvider<MeterRegistry> registry, ListableBeanFactory beans) {
        if (!beans.containsBean(STARTERS_CLIENT)) { // the starter's own is built from the property, and started
            requireUsable(curator, properties.getIssuer().getZookeeper().getConnectString());
        }
        return new ZooKeeperTokenIssuer(curator, properties.getIssuer().getZookeeper().getLockPath(),
                registry.getIfUnique());
    }

    /**
     * Refuses, at startup, an application's Curator client that was never started (every acquire would fail), and one
     * whose locks live elsewhere than {@code connect-string} names (other hosts, or another root: a chroot, or a
     * namespace of the client's): the property would be ignored, and instances configured through it alone would lock
     * elsewhere. Hosts are compared as a set (order, spaces and the default port aside).
     */
    static void requireUsable(CuratorFramework curator, String connectString) {
        if (curator.getState() == CuratorFrameworkState.LATENT) {
            throw new FencingConfigurationException("The application's CuratorFramework bean was never started, so "
                    + "every @Fenced(acquire = true) call would fail: call start() on it (in its @Bean method), or "
                    + "leave it out and set " + CONNECT_STRING + ", for a client the starter creates and starts");
        }
        String used = curator.getZookeeperClient().getCurrentConnectionString();
        String namespace = curator.getNamespace();
        // the root the client's paths start from: its chroot, then its namespace
        String usedRoot = namespace == null || namespace.isEmpty() ? root(used)
                : (root(used).equals("/") ? "" : root(used)) + "/" + namespace;
        if (connectString != null && !connectString.isBlank() && (!hosts(connectString).equals(hosts(used))
                || !root(connectString).equals(usedRoot))) {
            throw new FencingConfigurationException(CONNECT_STRING + " is '" + connectString.trim() + "', but the "
                    + "issuer uses the application's CuratorFramework bean, connected to '" + used + "'"
                    + (namespace == null || namespace.isEmpty() ? "" : " with namespace '" + namespace + "'")
                    + ": the property would be ignored, and instances configured through it alone would lock "
                    + "elsewhere. Remove the property (the bean wins), or the bean, or make them name the same "
                    + "ensemble and root");
        }
    }

    /** The hosts of a connect string, as a set of lower-case {@code host:port} (port 2181 when none is given). */
    private static java.util.Set<String> hosts(String connectString) {
        int slash = connectString.indexOf('/');
        String hosts = slash < 0 ? connectString : connectString.substring(0, slash);
        java.util.Set<String> set = new java.util.TreeSet<>();
        for (String host : hosts.split(",")) {
            String trimmed = host.trim().toLowerCase(java.util.Locale.ROOT);
            if (!trimmed.isEmpty()) {
                set.add(trimmed.lastIndexOf(':') > trimmed.lastIndexOf(']') ? trimmed : trimmed + ":2181");
            }
        }
        return set;
    }

    /** The chroot of a connect string, {@code /} when none (a trailing slash dropped). */
    private static String root(String connectString) {
        int slash = connectString.indexOf('/');
        String root = slash < 0 ? "/" : connectString.substring(slash).trim();
        return root.length() > 1 && root.endsWith("/") ? root.substring(0, root.length() - 1) : root;
    }

    /** The Curator client, when the application has none. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingBean(CuratorFramework.class)
    static class CuratorConfiguration {

        /** Curator's default connection timeout. */
        static final int CONNECTION_TIMEOUT_MS = 15_000;

        @Bean(destroyMethod = "close")
        CuratorFramework fencingCuratorFramework(FencingProperties properties) {
            FencingProperties.ZooKeeperIssuer zookeeper = properties.getIssuer().getZookeeper();
            String connectString = zookeeper.getConnectString();
            if (connectString == null || connectString.isBlank()) {
                throw new FencingConfigurationException("fencing.issuer.type=zookeeper needs the ZooKeeper ensemble: "
                        + "set " + CONNECT_STRING + " (e.g. zk1:2181,zk2:2181,zk3:2181), or define a started "
                        + "CuratorFramework bean, which the issuer then uses");
            }
            try {
                // what the ZooKeeper client parses in its constructor, which Curator runs in the background: a bad
                // port or chroot there left the application up, every acquire "not reachable", never saying why
                new ConnectStringParser(connectString);
            } catch (RuntimeException malformed) {
                throw new FencingConfigurationException(CONNECT_STRING + " '" + connectString + "' is a "
                        + "connect string ZooKeeper cannot parse: " + malformed + ". Write it as host:port[,host:port"
                        + "...][/chroot], e.g. zk1:2181,zk2:2181,zk3:2181 or zk1:2181/apps/fencing (a chroot without "
                        + "a trailing slash)");
            }
            int session = Math.toIntExact(zookeeper.getSessionTimeout().toMillis());
            CuratorFramework curator = CuratorFrameworkFactory.builder()
                    .connectString(connectString)
                    .sessionTimeoutMs(session)
                    // Curator's 15 s, or the session when shorter: a connection attempt outlasting the session is
                    // pointless, and Curator warns at every start about a session shorter than it
                    .connectionTimeoutMs(Math.min(CONNECTION_TIMEOUT_MS, session))
                    .retryPolicy(new ExponentialBackoffRetry(1000, 3))
                    .build();
            curator.getConnectionStateListenable().addListener(new NegotiatedSessionTimeout(session));
            curator.start();
            return curator;
        }
    }

    /**
     * Says so, once per value, when the ensemble grants the starter's client another session timeout than
     * {@code fencing.issuer.zookeeper.session-timeout} asks for: the server bounds it to its minSessionTimeout and
     * maxSessionTimeout (2 and 20 tickTimes unless set), silently, and it is the granted one that decides when a
     * paused or cut-off holder loses its lock nodes (its lease marked lost). WARN when shorter, INFO when longer.
     */
    static final class NegotiatedSessionTimeout implements ConnectionStateListener {
        private static final Log log = LogFactory.getLog(FencingZooKeeperAutoConfiguration.class);
        private final int configured;
        private final AtomicInteger reported = new AtomicInteger();

        NegotiatedSessionTimeout(int configured) {
            this.configured = configured;
        }

        @Override
        public void stateChanged(CuratorFramework client, ConnectionState state) {
            if (state != ConnectionState.CONNECTED && state != ConnectionState.RECONNECTED) {
                return;
            }
            int negotiated;
            try {
                negotiated = client.getZookeeperClient().getZooKeeper().getSessionTimeout();
            } catch (Exception closing) {
                return;
            }
            if (negotiated <= 0 || negotiated == configured || reported.getAndSet(negotiated) == negotiated) {
                return;
            }
            String message = "ZooKeeper at " + client.getZookeeperClient().getCurrentConnectionString()
                    + " granted a session timeout of " + negotiated + " ms, not the " + configured + " ms "
                    + SESSION_TIMEOUT + " asks for: the server bounds it to its minSessionTimeout and "
                    + "maxSessionTimeout (2 and 20 tickTimes unless set). A holder paused or cut off from the ensemble "
                    + "for longer than " + negotiated + " ms loses its lock nodes, and its lease is marked lost. ";
            if (negotiated < configured) {
                log.warn(message + "Set " + SESSION_TIMEOUT + " within the servers' bounds, or raise "
                        + "maxSessionTimeout on every server");
            } else {
                log.info(message + "Set " + SESSION_TIMEOUT + " within the servers' bounds to silence this");
            }
        }
    }
}
