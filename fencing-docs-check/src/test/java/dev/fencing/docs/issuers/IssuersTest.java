package dev.fencing.docs.issuers;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.docs.Databases;
import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.core.HazelcastInstance;
import dev.fencing.etcd.EtcdTokenIssuer;
import dev.fencing.hazelcast.HazelcastTokenIssuer;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcIssuerBase;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.token.FencingToken;
import java.util.ArrayList;
import java.util.List;
import io.etcd.jetcd.Client;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class IssuersTest {

    @Configuration
    static class Registry {
        @Bean MeterRegistry meterRegistry() { return new SimpleMeterRegistry(); }
    }

    @Test
    void theDocumentedZooKeeperIssuerHandsOutIncreasingTokens() throws Exception {
        try (TestingServer server = new TestingServer(true);
             CuratorFramework curator = CuratorFrameworkFactory.newClient(server.getConnectString(),
                     new RetryOneTime(100))) {
            curator.start();
            try (var context = new AnnotationConfigApplicationContext()) {
                context.register(ZooKeeperIssuerConfig.class, Registry.class);
                context.registerBean(CuratorFramework.class, () -> curator);
                context.refresh();
                assertIncreasing(context.getBean(TokenIssuer.class));
            }
        }
    }

    @Test
    void theDocumentedOffsetIssuerAddsItsBaseAndStoresItOnce() throws Exception {
        DataSource h2 = Databases.h2("offset", "issuer-base-h2.sql");
        JdbcFenceStore fences = JdbcFenceStore.builder(h2).createTableIfMissing(true).build();
        fences.verify();
        try (TestingServer server = new TestingServer(true);
             CuratorFramework curator = CuratorFrameworkFactory.newClient(server.getConnectString(),
                     new RetryOneTime(100))) {
            curator.start();
            try (var context = new AnnotationConfigApplicationContext()) {
                context.register(OffsetIssuerConfig.class, Registry.class);
                context.registerBean(CuratorFramework.class, () -> curator);
                context.registerBean(DataSource.class, () -> h2);
                context.registerBean(JdbcFenceStore.class, () -> fences);
                context.refresh();
                TokenIssuer issuer = context.getBean(TokenIssuer.class); // the @Primary one
                assertThat(issuer).isInstanceOf(OffsetTokenIssuer.class);
                try (Lease lease = issuer.acquire("ledger", Duration.ofSeconds(10))) {
                    assertThat(lease.token().value()).isGreaterThan(1_000_000_000L);
                }
                assertIncreasing(issuer);
            }
            assertThat(new JdbcIssuerBase(h2, "fencing_issuer_base").stored("zk-2026")).hasValue(1_000_000_000L);
        }
    }

    @Test
    void theDocumentedDatabaseLeaseHandsOutIncreasingTokens() {
        try (var context = new AnnotationConfigApplicationContext()) {
            context.register(JdbcIssuerConfig.class, Registry.class);
            context.registerBean(DataSource.class, () -> Databases.h2("issuers", "lease-h2.sql"));
            context.refresh();
            assertIncreasing(context.getBean(TokenIssuer.class));
        }
    }

    @Test
    void theDocumentedEtcdIssuerIsCreatedAndClosed() {
        try (Client etcd = Client.builder().endpoints("http://127.0.0.1:1").build();
             var context = new AnnotationConfigApplicationContext()) {
            context.register(EtcdIssuerConfig.class, Registry.class);
            context.registerBean(Client.class, () -> etcd);
            context.refresh();
            assertThat(context.getBean(TokenIssuer.class)).isInstanceOf(EtcdTokenIssuer.class);
        }
    }

    @Test
    void theDocumentedHazelcastIssuerIsCreatedAndClosed() {
        ClientConfig config = new ClientConfig();
        config.setProperty("hazelcast.phone.home.enabled", "false");
        config.getNetworkConfig().addAddress("127.0.0.1:1");
        config.getConnectionStrategyConfig().setAsyncStart(true); // created without a cluster
        HazelcastInstance client = HazelcastClient.newHazelcastClient(config);
        try (var context = new AnnotationConfigApplicationContext()) {
            context.register(HazelcastIssuerConfig.class, Registry.class);
            context.registerBean(HazelcastInstance.class, () -> client);
            context.refresh();
            assertThat(context.getBean(TokenIssuer.class)).isInstanceOf(HazelcastTokenIssuer.class);
        } finally {
            client.getLifecycleService().terminate();
        }
        assertThat(HazelcastIssuerConfig.memberConfig().getCPSubsystemConfig().getCPMemberCount()).isEqualTo(3);
    }

    @Test
    void aLeaseReleasesItselfAtTheEndOfItsBlock() {
        TokenIssuer issuer = new InMemoryTokenIssuer();
        List<Long> written = new ArrayList<>();
        Lease held;
        // tag::lease[]
        try (Lease lease = issuer.acquire("accounts:42", Duration.ofSeconds(10))) {
            FencingToken token = lease.token();      // send it with every write to the fenced resource
            written.add(token.value());
            held = lease;
        }                                            // close() released the lock; a lost lease closes quietly
        // end::lease[]
        assertThat(held.isReleased()).isTrue();
        assertThat(held.isLost()).isFalse();
        assertThat(held.isHeld()).isFalse();
        assertThat(written).hasSize(1);
        issuer.acquire("accounts:42", Duration.ZERO).close(); // free at once
    }

    private static void assertIncreasing(TokenIssuer issuer) {
        Lease first = issuer.acquire("accounts:42", Duration.ofSeconds(10));
        first.close();
        Lease second = issuer.acquire("accounts:42", Duration.ofSeconds(10));
        second.close();
        assertThat(second.token().value()).isGreaterThan(first.token().value());
    }
}
