package dev.fencing.boot.autoconfigure;

import dev.fencing.boot.actuate.FencingEndpoint;
import dev.fencing.boot.actuate.FencingHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.etcd.EtcdTokenIssuer;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.store.FenceStore;
import dev.fencing.token.FencingToken;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code fencing.issuer.type=etcd}: the issuer on its own jetcd client or the application's, on a real etcd member
 * (Debian's {@code etcd-server}, as fencing-etcd's tests use), started on a free loopback port.
 */
class FencingEtcdAutoConfigurationTest {

    private static Process etcd;
    private static String endpoint;

    public static class AcquiringLedger {
        final List<FencingToken> tokens = new CopyOnWriteArrayList<>();
        final List<Long> lockKeys = new CopyOnWriteArrayList<>();

        @Fenced(resource = "ledger", acquire = true)
        public String post(Client client, String prefix) throws Exception {
            tokens.add(FencingContext.current("ledger"));
            ByteSequence key = ByteSequence.from(prefix, StandardCharsets.UTF_8);
            lockKeys.add(client.getKVClient().get(key, GetOption.builder().isPrefix(true).build())
                    .get(10, TimeUnit.SECONDS).getCount());
            return "posted";
        }

        public List<FencingToken> tokens() {
            return tokens;
        }

        public List<Long> lockKeys() {
            return lockKeys;
        }
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                    FencingEtcdAutoConfiguration.class))
            .withBean(AcquiringLedger.class)
            .withPropertyValues("fencing.store.type=in-memory",
                    "fencing.store.in-memory.single-instance=true", "fencing.issuer.type=etcd");

    @BeforeAll
    static void start() throws Exception {
        // a port chosen free may be taken before etcd binds it: a start that fails is tried again on new ports
        for (int attempt = 1; ; attempt++) {
            int[] ports = freePorts();
            endpoint = "http://127.0.0.1:" + ports[0];
            Path data = Files.createTempDirectory(Path.of("target"), "etcd-");
            etcd = new ProcessBuilder("etcd", "--name", "boot", "--data-dir", data.toString(),
                    "--listen-client-urls", endpoint, "--advertise-client-urls", endpoint,
                    "--listen-peer-urls", "http://127.0.0.1:" + ports[1],
                    "--initial-advertise-peer-urls", "http://127.0.0.1:" + ports[1],
                    "--initial-cluster", "boot=http://127.0.0.1:" + ports[1], "--log-level", "warn")
                    .redirectErrorStream(true).redirectOutput(data.resolve("etcd.log").toFile()).start();
            try {
                awaitReady(data);
                return;
            } catch (IllegalStateException e) {
                stop();
                if (attempt == 3) {
                    throw e;
                }
            }
        }
    }

    private static void awaitReady(Path data) throws InterruptedException {
        try (Client client = Client.builder().endpoints(endpoint).build()) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true) {
                try {
                    client.getKVClient().put(ByteSequence.from("/ready", StandardCharsets.UTF_8),
                            ByteSequence.from("1", StandardCharsets.UTF_8)).get(2, TimeUnit.SECONDS);
                    return;
                } catch (Exception e) {
                    if (!etcd.isAlive() || System.nanoTime() > deadline) {
                        throw new IllegalStateException("etcd did not become ready"
                                + (etcd.isAlive() ? "" : " (it exited)") + "; log in " + data, e);
                    }
                    Thread.sleep(100);
                }
            }
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (etcd != null) {
            etcd.destroyForcibly();
            etcd.waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** A client and a peer port, chosen with both held open, so that they differ. */
    private static int[] freePorts() throws Exception {
        try (ServerSocket client = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             ServerSocket peer = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return new int[] {client.getLocalPort(), peer.getLocalPort()};
        }
    }

    @Test
    void healthIsUpWhileEtcdAnswersAndDownNamingTheEndpointsWhenItDoesNot() {
        runner.withConfiguration(AutoConfigurations.of(FencingActuatorAutoConfiguration.class))
                .withPropertyValues("fencing.issuer.etcd.endpoints=" + endpoint).run(context -> {
                    assertThat(context).hasNotFailed();
                    Health health = context.getBean(FencingHealthIndicator.class).health();
                    assertThat(health.getStatus()).as("%s", health.getDetails()).isEqualTo(Status.UP);
                    // where the locks are, for an operator: on the health details and /actuator/fencing alike
                    assertThat(health.getDetails()).containsEntry("issuer", Map.of("type", "EtcdTokenIssuer",
                            "endpoints", endpoint, "prefix", EtcdTokenIssuer.DEFAULT_PREFIX, "sessionTtl", "PT10S"));
                    assertThat(new FencingEndpoint(context.getBean(FenceStore.class),
                            context.getBean(TokenIssuer.class), null, null).fencing().get("issuer"))
                            .isEqualTo(health.getDetails().get("issuer"));
                });
        runner.withConfiguration(AutoConfigurations.of(FencingActuatorAutoConfiguration.class))
                .withPropertyValues("fencing.issuer.etcd.endpoints=http://127.0.0.1:1").run(context -> {
                    assertThat(context).hasNotFailed();
                    Health health = context.getBean(FencingHealthIndicator.class).health();
                    assertThat(health.getStatus()).isEqualTo(Status.DOWN);
                    assertThat((String) health.getDetails().get("error")).startsWith("token issuer: ")
                            .contains("etcd at http://127.0.0.1:1");
                });
    }

    @Test
    void anIssuerOnItsOwnClientFromTheProperties() {
        runner.withPropertyValues("fencing.issuer.etcd.endpoints=" + endpoint,
                "fencing.issuer.etcd.lock-prefix=/boot/locks/", "fencing.issuer.etcd.lease-ttl=5s").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(EtcdTokenIssuer.class).hasBean("fencingEtcdClient");
            Client client = context.getBean(Client.class);
            AcquiringLedger ledger = context.getBean(AcquiringLedger.class);
            assertThat(ledger.post(client, "/boot/locks/")).isEqualTo("posted");
            assertThat(ledger.post(client, "/boot/locks/")).isEqualTo("posted");
            assertThat(ledger.lockKeys()).containsExactly(1L, 1L); // the lock key lives under the configured prefix
            assertThat(ledger.tokens().get(1).value()).isGreaterThan(ledger.tokens().get(0).value());
        });
    }

    @Test
    void theApplicationsClientIsReusedAndNotClosed() throws Exception {
        try (Client own = Client.builder().endpoints(endpoint).build()) {
            runner.withBean("etcdClient", Client.class, () -> own, definition -> definition.setDestroyMethodName(""))
                    .run(context -> {
                        assertThat(context).hasNotFailed().hasSingleBean(Client.class)
                                .doesNotHaveBean("fencingEtcdClient").hasSingleBean(EtcdTokenIssuer.class);
                        assertThat(context.getBean(AcquiringLedger.class).post(own, EtcdTokenIssuer.DEFAULT_PREFIX))
                                .isEqualTo("posted");
                    });
            // still usable after the context closed
            own.getKVClient().get(ByteSequence.from("/ready", StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void withoutEndpointsOrClientBeanStartupFailsSayingWhatToSet() {
        runner.run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("fencing.issuer.etcd.endpoints").hasMessageContaining("jetcd Client bean");
        });
    }

    @Test
    void theClientItBuildsLeavesRetriesToTheIssuer() {
        assertThat(FencingEtcdAutoConfiguration.ClientConfiguration.clientBuilder(List.of(endpoint)).retryMaxAttempts())
                .as("jetcd's own retries are invisible to the issuer, which then cannot watch a retried grant")
                .isZero();
    }

    @Test
    void aLeaseTtlEtcdCannotKeepFailsStartupNamingTheProperty() {
        for (String ttl : new String[] {"500ms", "1500ms", "0s"}) {
            runner.withPropertyValues("fencing.issuer.etcd.endpoints=" + endpoint,
                    "fencing.issuer.etcd.lease-ttl=" + ttl)
                    .run(context -> {
                        assertThat(context).as(ttl).hasFailed();
                        assertThat(context.getStartupFailure()).rootCause().as(ttl)
                                .hasMessageStartingWith("fencing.issuer.etcd.lease-ttl must be a whole number of "
                                        + "seconds, at least 1s")
                                .hasMessageEndingWith("was " + java.time.Duration.parse(
                                        ttl.equals("0s") ? "PT0S" : ttl.equals("500ms") ? "PT0.5S" : "PT1.5S"));
                    });
        }
        runner.withPropertyValues("fencing.issuer.etcd.endpoints=" + endpoint, "fencing.issuer.etcd.lease-ttl=2s")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(EtcdTokenIssuer.class));
    }

    @Test
    void anEndpointWithoutSchemeFailsStartupNamingThePropertyAndTheEntry() {
        for (String endpoints : new String[] {"127.0.0.1:2379", endpoint + ",etcd2:2379", "http://", "http://a b:1"}) {
            runner.withPropertyValues("fencing.issuer.etcd.endpoints=" + endpoints).run(context -> {
                assertThat(context).as(endpoints).hasFailed();
                assertThat(context.getStartupFailure()).rootCause().as(endpoints)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageStartingWith("fencing.issuer.etcd.endpoints must list URLs with a scheme and a host")
                        .hasMessageContaining("was '" + endpoints.substring(endpoints.lastIndexOf(',') + 1) + "'");
            });
        }
    }

    /**
     * jetcd ignores an endpoint's scheme: a client built without an SSL context talks plaintext to every endpoint, so
     * {@code https://} through the starter's own client (which has no TLS settings) sent the lock traffic unencrypted
     * to a server that answered plaintext (a trial's application ran so), and never reached one that speaks TLS only.
     */
    @Test
    void anEndpointOfAnotherSchemeThanHttpFailsStartupNamingTheClientBeanForTls() {
        runner.withPropertyValues("fencing.issuer.etcd.endpoints=" + endpoint.replace("http://", "https://"))
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(IllegalArgumentException.class)
                            .hasMessageStartingWith("fencing.issuer.etcd.endpoints")
                            .hasMessageContaining("'" + endpoint.replace("http://", "https://") + "'")
                            .hasMessageContaining("plaintext").hasMessageContaining("jetcd Client bean");
                });
        runner.withPropertyValues("fencing.issuer.etcd.endpoints=etcd://127.0.0.1:2379").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'etcd://127.0.0.1:2379'").hasMessageContaining("http://");
        });
        runner.withPropertyValues("fencing.issuer.etcd.endpoints=" + endpoint.replace("http://", "HTTP://"))
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(EtcdTokenIssuer.class));
    }

    /** A trailing comma or spaces are dropped where the client is built, and so in the health details and messages. */
    @Test
    void theEndpointsTheIssuerNamesAreTheOnesTheClientUses() {
        runner.withPropertyValues("fencing.issuer.etcd.endpoints=" + endpoint + ", ").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(EtcdTokenIssuer.class).describe()).containsEntry("endpoints", endpoint);
        });
    }

    @Test
    void aTokenIssuerOfTheApplicationWinsAndOtherIssuerTypesAddNothing() {
        runner.withPropertyValues("fencing.issuer.etcd.endpoints=" + endpoint)
                .withBean("ownIssuer", TokenIssuer.class, InMemoryTokenIssuer::new)
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(TokenIssuer.class)
                        .doesNotHaveBean(EtcdTokenIssuer.class));
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                        FencingEtcdAutoConfiguration.class))
                .withPropertyValues("fencing.store.type=in-memory", "fencing.issuer.etcd.endpoints=" + endpoint)
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(TokenIssuer.class)
                        .doesNotHaveBean(Client.class));
    }

    /**
     * The application's jetcd Client beside fencing.issuer.etcd.endpoints: the issuer used the client and named the
     * property's endpoints in its messages and health, where nobody talked (a red-team review). jetcd does not tell
     * its endpoints, so the two together fail startup.
     */
    @Test
    void endpointsBesideTheApplicationsClientFailStartup() throws Exception {
        try (Client own = Client.builder().endpoints(endpoint).build()) {
            runner.withBean("etcdClient", Client.class, () -> own, definition -> definition.setDestroyMethodName(""))
                    .withPropertyValues("fencing.issuer.etcd.endpoints=http://127.0.0.1:1")
                    .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                            .hasMessageContaining("http://127.0.0.1:1")
                            .hasMessageContaining("application's jetcd Client")
                            .hasMessageContaining("Remove the property"));
        }
    }
}
