package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.zookeeper.ZooKeeperTokenIssuer;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

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

    @Bean
    @ConditionalOnMissingBean(TokenIssuer.class)
    ZooKeeperTokenIssuer tokenIssuer(CuratorFramework curator, FencingProperties properties,
                                     ObjectProvider<MeterRegistry> registry) {
        requireUsable(curator, properties.getIssuer().getZookeeper().getConnectString());
        return new ZooKeeperTokenIssuer(curator, properties.getIssuer().getZookeeper().getLockPath(),
                registry.getIfUnique());
    }

    /**
     * Refuses, at startup, an application's Curator client that was never started (every acquire would fail), and one
     * that talks to another ensemble than {@code connect-string} names: the property would be ignored, and instances
     * configured through it alone would lock on another ensemble, with tokens of an unrelated sequence.
     */
    static void requireUsable(CuratorFramework curator, String connectString) {
        if (curator.getState() == CuratorFrameworkState.LATENT) {
            throw new FencingConfigurationException("The application's CuratorFramework bean was never started, so "
                    + "every @Fenced(acquire = true) call would fail: call start() on it (in its @Bean method), or "
                    + "leave it out and set " + CONNECT_STRING + ", for a client the starter creates and starts");
        }
        String used = curator.getZookeeperClient().getCurrentConnectionString();
        if (connectString != null && !connectString.isBlank() && !connectString.trim().equals(used)) {
            throw new FencingConfigurationException(CONNECT_STRING + " is '" + connectString.trim() + "', but the "
                    + "issuer uses the application's CuratorFramework bean, connected to '" + used + "': the property "
                    + "would be ignored, and instances configured through it alone would lock on another ensemble. "
                    + "Remove the property (the bean wins), or the bean, or make them name the same ensemble");
        }
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
            int session = Math.toIntExact(zookeeper.getSessionTimeout().toMillis());
            CuratorFramework curator = CuratorFrameworkFactory.builder()
                    .connectString(connectString)
                    .sessionTimeoutMs(session)
                    // Curator's 15 s, or the session when shorter: a connection attempt outlasting the session is
                    // pointless, and Curator warns at every start about a session shorter than it
                    .connectionTimeoutMs(Math.min(CONNECTION_TIMEOUT_MS, session))
                    .retryPolicy(new ExponentialBackoffRetry(1000, 3))
                    .build();
            curator.start();
            return curator;
        }
    }
}
