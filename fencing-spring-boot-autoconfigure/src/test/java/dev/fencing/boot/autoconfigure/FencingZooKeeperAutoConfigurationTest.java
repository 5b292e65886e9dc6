package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import org.assertj.core.api.InstanceOfAssertFactories;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.token.FencingToken;
import dev.fencing.zookeeper.ZooKeeperTokenIssuer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import java.util.Map;
import dev.fencing.boot.actuate.FencingHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code fencing.issuer.type=zookeeper}: the issuer on its own Curator client or the application's, on a real server.
 */
class FencingZooKeeperAutoConfigurationTest {

    private static TestingServer server;

    public static class AcquiringLedger {
        final List<String> lockNodes = new CopyOnWriteArrayList<>();
        final List<FencingToken> tokens = new CopyOnWriteArrayList<>();

        @Fenced(resource = "ledger", acquire = true)
        public String post(CuratorFramework curator, String lockPath) throws Exception {
            tokens.add(FencingContext.current("ledger"));
            lockNodes.addAll(curator.getChildren().forPath(lockPath));
            return "posted";
        }

        public List<String> lockNodes() {
            return lockNodes;
        }

        public List<FencingToken> tokens() {
            return tokens;
        }
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                    FencingZooKeeperAutoConfiguration.class))
            .withBean(AcquiringLedger.class)
            .withPropertyValues("fencing.store.type=in-memory",
                    "fencing.store.in-memory.single-instance=true", "fencing.issuer.type=zookeeper");

    @BeforeAll
    static void start() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @Test
    void healthIsDownWhileZooKeeperIsUnreachableAndUpAgainAfter() throws Exception {
        try (TestingServer own = new TestingServer(true)) {
            runner.withConfiguration(AutoConfigurations.of(FencingActuatorAutoConfiguration.class))
                    .withPropertyValues("fencing.issuer.zookeeper.connect-string=" + own.getConnectString(),
                            "fencing.issuer.zookeeper.session-timeout=20s").run(context -> {
                        assertThat(context).hasNotFailed();
                        FencingHealthIndicator health = context.getBean(FencingHealthIndicator.class);
                        awaitStatus(health, Status.UP); // DOWN until the client's first connection
                        // asked again: the details of the first UP may have been read before the connection
                        assertThat(health.health().getDetails()).containsEntry("issuer", Map.of(
                                "type", "ZooKeeperTokenIssuer",
                                "connectString", own.getConnectString(),
                                "basePath", ZooKeeperTokenIssuer.DEFAULT_BASE_PATH, "sessionTimeout", "PT20S"));
                        own.stop();
                        Health down = awaitStatus(health, Status.DOWN);
                        assertThat((String) down.getDetails().get("error")).startsWith("token issuer: ")
                                .contains("ZooKeeper at " + own.getConnectString());
                        own.restart();
                        awaitStatus(health, Status.UP);
                    });
        }
    }

    /**
     * The server cuts the starter's default 60 s session to its maxSessionTimeout (20 ticks: 20 s at tickTime=1000),
     * as a new user's trial found only by reading the server's log: the starter now says so once, with both values and
     * what it means for the lease, and the health details show the granted timeout.
     */
    @Test
    @Timeout(60)
    @ExtendWith(OutputCaptureExtension.class)
    void aSessionTimeoutTheServerCutsIsLoggedOnceAndShownOnTheHealth(CapturedOutput output) throws Exception {
        InstanceSpec tickOfOneSecond = new InstanceSpec(null, -1, -1, -1, true, -1, 1_000, -1);
        try (TestingServer cutting = new TestingServer(tickOfOneSecond, true)) {
            runner.withConfiguration(AutoConfigurations.of(FencingActuatorAutoConfiguration.class))
                    .withPropertyValues("fencing.issuer.zookeeper.connect-string=" + cutting.getConnectString())
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        FencingHealthIndicator health = context.getBean(FencingHealthIndicator.class);
                        awaitStatus(health, Status.UP); // its details were read before it waited for the connection
                        assertThat(health.health().getDetails().get("issuer"))
                                .asInstanceOf(InstanceOfAssertFactories.MAP).containsEntry("sessionTimeout", "PT20S");
                        String warning = "ZooKeeper at " + cutting.getConnectString() + " granted a session timeout "
                                + "of 20000 ms, not the 60000 ms fencing.issuer.zookeeper.session-timeout asks for";
                        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                        while (!output.getOut().contains(warning) && System.nanoTime() < deadline) {
                            Thread.sleep(50);
                        }
                        assertThat(output.getOut()).contains(warning).contains("WARN")
                                .contains("for longer than 20000 ms loses its lock nodes, and its lease is "
                                        + "marked lost");
                        assertThat(output.getOut().split(java.util.regex.Pattern.quote(warning), -1)).hasSize(2);
                    });
        }
    }

    /** A session shorter than Curator's 15 s connection timeout bounds the connection timeout too (no warning). */
    @Test
    void aShortSessionBoundsTheConnectionTimeout() {
        runner.withPropertyValues("fencing.issuer.zookeeper.connect-string=" + server.getConnectString(),
                "fencing.issuer.zookeeper.session-timeout=4s").run(context -> {
                    assertThat(context).hasNotFailed();
                    CuratorFramework curator = context.getBean(CuratorFramework.class);
                    assertThat(curator.getZookeeperClient().getConnectionTimeoutMs()).isEqualTo(4_000);
                });
        runner.withPropertyValues("fencing.issuer.zookeeper.connect-string=" + server.getConnectString())
                .run(context -> assertThat(context.getBean(CuratorFramework.class).getZookeeperClient()
                        .getConnectionTimeoutMs()).isEqualTo(15_000));
    }

    static Health awaitStatus(FencingHealthIndicator indicator, Status status) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Health health = indicator.health();
        while (!health.getStatus().equals(status) && System.nanoTime() < deadline) {
            Thread.sleep(100);
            health = indicator.health();
        }
        assertThat(health.getStatus()).as("health %s", health.getDetails()).isEqualTo(status);
        return health;
    }

    @Test
    void anIssuerOnItsOwnCuratorClientFromTheProperties() {
        runner.withPropertyValues("fencing.issuer.zookeeper.connect-string=" + server.getConnectString(),
                "fencing.issuer.zookeeper.lock-path=/boot/locks",
                "fencing.issuer.zookeeper.session-timeout=20s").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(ZooKeeperTokenIssuer.class)
                    .hasBean("fencingCuratorFramework");
            CuratorFramework curator = context.getBean(CuratorFramework.class);
            AcquiringLedger ledger = context.getBean(AcquiringLedger.class);
            assertThat(ledger.post(curator, "/boot/locks")).isEqualTo("posted");
            assertThat(ledger.post(curator, "/boot/locks")).isEqualTo("posted");
            assertThat(ledger.lockNodes()).hasSize(2); // one lock node under the configured path per call
            assertThat(ledger.tokens()).hasSize(2);
            assertThat(ledger.tokens().get(1).value()).isGreaterThan(ledger.tokens().get(0).value());
            assertThat(curator.getZookeeperClient().getLastNegotiatedSessionTimeoutMs()).isEqualTo(20_000);
        });
    }

    @Test
    void theApplicationsCuratorFrameworkIsReusedAndNotClosed() throws Exception {
        try (CuratorFramework own = CuratorFrameworkFactory.newClient(server.getConnectString(),
                new RetryOneTime(100))) {
            own.start();
            runner.withBean("curator", CuratorFramework.class, () -> own, definition ->
                    definition.setDestroyMethodName(""))
                    .run(context -> {
                        assertThat(context).hasNotFailed().hasSingleBean(CuratorFramework.class)
                                .doesNotHaveBean("fencingCuratorFramework").hasSingleBean(ZooKeeperTokenIssuer.class);
                        AcquiringLedger ledger = context.getBean(AcquiringLedger.class);
                        assertThat(ledger.post(own, ZooKeeperTokenIssuer.DEFAULT_BASE_PATH)).isEqualTo("posted");
                        assertThat(ledger.lockNodes()).hasSize(1);
                    });
            assertThat(own.getZookeeperClient().isConnected()).isTrue();
        }
    }

    @Test
    void withoutConnectStringOrCuratorBeanStartupFailsSayingWhatToSet() {
        runner.run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("fencing.issuer.zookeeper.connect-string")
                    .hasMessageContaining("CuratorFramework bean");
        });
    }

    /**
     * A connect string ZooKeeper cannot parse (a port with a typo, a port out of range, a chroot that is not a path)
     * started the application: the startup counter check was skipped with a warning, and every acquire and the health
     * component said only that ZooKeeper was "not reachable" within the timeout, never why. It now fails startup
     * naming the property, the value and ZooKeeper's reason.
     */
    @Test
    @org.junit.jupiter.api.Timeout(60)
    void aConnectStringZooKeeperCannotParseFailsStartupNamingTheProperty() {
        for (String bad : new String[] {"127.0.0.1:21817x", "127.0.0.1:99999", "127.0.0.1:2181/apps/"}) {
            runner.withPropertyValues("fencing.issuer.zookeeper.connect-string=" + bad).run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).rootCause()
                        .isInstanceOf(FencingConfigurationException.class)
                        .hasMessageContaining("fencing.issuer.zookeeper.connect-string '" + bad + "'")
                        .hasMessageContaining("ZooKeeper cannot parse");
            });
        }
        // a host name that does not resolve now may resolve later: not refused
        runner.withPropertyValues("fencing.issuer.zookeeper.connect-string=zk-not-yet.invalid:2181,"
                + server.getConnectString()).run(context -> assertThat(context).hasNotFailed());
    }

    /**
     * A session timeout of zero (or a bare 60, read as 60 ms) made Curator loop and every acquire say ZooKeeper was
     * not reachable; a relative lock path failed naming the builder. Both now fail startup naming the property.
     */
    @Test
    void aSessionTimeoutUnderASecondOrARelativeLockPathFailsStartupNamingTheProperty() {
        String connect = "fencing.issuer.zookeeper.connect-string=" + server.getConnectString();
        runner.withPropertyValues(connect, "fencing.issuer.zookeeper.session-timeout=0s").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessageContaining("fencing.issuer.zookeeper.session-timeout must be at least 1s");
        });
        runner.withPropertyValues(connect, "fencing.issuer.zookeeper.lock-path=fencing/locks").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessageContaining("fencing.issuer.zookeeper.lock-path must be an absolute ZooKeeper path")
                    .hasMessageContaining("'fencing/locks'");
        });
        // a trailing space (a properties file keeps it) made a second lock tree beside /fencing/locks
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new FencingProperties.ZooKeeperIssuer()
                .setLockPath("/fencing/locks ")).hasMessageContaining("no spaces around it");
        for (String path : new String[] {"/fencing/locks/", "/fencing//locks", "/fencing/./locks"}) {
            runner.withPropertyValues(connect, "fencing.issuer.zookeeper.lock-path=" + path).run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).rootCause()
                        .hasMessageContaining("fencing.issuer.zookeeper.lock-path must be an absolute ZooKeeper path")
                        .hasMessageContaining("'" + path + "'");
            });
        }
    }

    @Test
    void aTokenIssuerOfTheApplicationWinsAndOtherIssuerTypesAddNothing() {
        runner.withPropertyValues("fencing.issuer.zookeeper.connect-string=" + server.getConnectString())
                .withBean("ownIssuer", TokenIssuer.class, () -> new dev.fencing.issuer.InMemoryTokenIssuer())
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(TokenIssuer.class)
                        .doesNotHaveBean(ZooKeeperTokenIssuer.class));
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                        FencingZooKeeperAutoConfiguration.class))
                .withPropertyValues("fencing.store.type=in-memory",
                        "fencing.issuer.zookeeper.connect-string=" + server.getConnectString())
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(TokenIssuer.class)
                        .doesNotHaveBean(CuratorFramework.class));
    }

    /**
     * The application's CuratorFramework bean beside a connect-string naming another ensemble: the property was
     * ignored without a word, and instances configured through it alone would lock on another ensemble (a red-team
     * review). And a bean never started: every acquire failed, startup said nothing. Both fail startup now; the same
     * connect string beside the bean is fine.
     */
    @Test
    void theApplicationsCuratorBeanMustBeStartedAndAgreeWithTheConnectString() throws Exception {
        try (TestingServer other = new TestingServer(true);
             CuratorFramework own = CuratorFrameworkFactory.newClient(server.getConnectString(),
                     new RetryOneTime(100))) {
            ApplicationContextRunner withOwn = runner.withBean("curator", CuratorFramework.class, () -> own,
                    definition -> definition.setDestroyMethodName(""));
            withOwn.run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                    .hasMessageContaining("never started").hasMessageContaining("start()"));
            own.start();
            withOwn.withPropertyValues("fencing.issuer.zookeeper.connect-string=" + other.getConnectString())
                    .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                            .hasMessageContaining(other.getConnectString())
                            .hasMessageContaining(server.getConnectString())
                            .hasMessageContaining("Remove the property"));
            withOwn.withPropertyValues("fencing.issuer.zookeeper.connect-string=" + server.getConnectString())
                    .run(context -> assertThat(context).hasNotFailed().hasSingleBean(ZooKeeperTokenIssuer.class));
            // the same hosts written otherwise are the same ensemble (a re-trial found such refused); another host
            // beside them is not
            withOwn.withPropertyValues("fencing.issuer.zookeeper.connect-string= " + server.getConnectString()
                    + " ,").run(context -> assertThat(context).hasNotFailed());
            withOwn.withPropertyValues("fencing.issuer.zookeeper.connect-string=" + other.getConnectString() + ","
                    + server.getConnectString()).run(context -> assertThat(context).hasFailed());
        }
        // a namespace moves the bean's locks under another root than the property's (a re-trial: two instances, one
        // configured each way, held one lock at once)
        try (CuratorFramework spaced = CuratorFrameworkFactory.builder().connectString(server.getConnectString())
                .namespace("app").retryPolicy(new RetryOneTime(100)).build()) {
            spaced.start();
            ApplicationContextRunner withSpaced = runner.withBean("curator", CuratorFramework.class, () -> spaced,
                    definition -> definition.setDestroyMethodName(""));
            withSpaced.withPropertyValues("fencing.issuer.zookeeper.connect-string=" + server.getConnectString())
                    .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                            .hasMessageContaining("namespace 'app'"));
            withSpaced.withPropertyValues("fencing.issuer.zookeeper.connect-string=" + server.getConnectString()
                    + "/app").run(context -> assertThat(context).hasNotFailed());
        }
    }

    /** The starter's own client, built from the property, is never refused by the check above. */
    @Test
    void theStartersOwnClientIsNotComparedWithItsProperty() {
        runner.withPropertyValues("fencing.issuer.zookeeper.connect-string=" + server.getConnectString() + ", ")
                .run(context -> assertThat(context).hasNotFailed().hasBean("fencingCuratorFramework"));
    }
}
