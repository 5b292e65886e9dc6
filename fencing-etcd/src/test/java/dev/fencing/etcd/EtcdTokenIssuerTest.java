package dev.fencing.etcd;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.RemoteTokenIssuerContract;
import dev.fencing.issuer.TokenIssuer;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The issuer contract on one real etcd member. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EtcdTokenIssuerTest extends RemoteTokenIssuerContract {

    private EtcdCluster etcd;
    private Client client;
    private EtcdTokenIssuer issuer;
    private Client unreachableClient;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @BeforeAll
    void start() throws Exception {
        etcd = new EtcdCluster(1);
        client = etcd.client();
        issuer = new EtcdTokenIssuer(client, etcd.endpoints(), "/fencing-test/", Duration.ofSeconds(5), registry);
    }

    @AfterAll
    void stop() throws Exception {
        issuer.close();
        client.close();
        if (unreachableClient != null) {
            unreachableClient.close();
        }
        etcd.close();
    }

    @Override
    protected TokenIssuer issuer() {
        return issuer;
    }

    @Override
    protected TokenIssuer unreachableIssuer() {
        unreachableClient = Client.builder().endpoints("http://127.0.0.1:1").connectTimeout(Duration.ofSeconds(1)).build();
        return new EtcdTokenIssuer(unreachableClient, "http://127.0.0.1:1", "/fencing-test/", Duration.ofSeconds(5), null);
    }

    @Override
    protected String unreachableServiceName() {
        return "http://127.0.0.1:1";
    }

    @Test
    void aRevokedSessionLeaseMarksItsLeasesLostAndANewSessionTakesOver() throws Exception {
        String resource = freshResource();
        Lease lease = issuer.acquire(resource, Duration.ofSeconds(10));
        String key = lease.token().holder().substring(0, lease.token().holder().lastIndexOf('@'));
        long sessionLease = Long.parseUnsignedLong(key.substring(key.lastIndexOf('/') + 1), 16);
        double lostBefore = registry.get("fencing.issuer.leases.lost").tag("issuer", "etcd").counter().count();

        client.getLeaseClient().revoke(sessionLease).get(10, TimeUnit.SECONDS); // etcd forgets the session
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!lease.isLost() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(lease.isLost()).isTrue();
        assertThat(registry.get("fencing.issuer.leases.lost").tag("issuer", "etcd").counter().count())
                .isEqualTo(lostBefore + 1);

        issuer.release(lease); // quiet: the key went with the lease
        Lease next = issuer.acquire(resource, Duration.ofSeconds(10));
        try {
            assertThat(next.token().value()).isGreaterThan(lease.token().value());
            assertThat(next.token().holder()).doesNotContain(Long.toHexString(sessionLease));
        } finally {
            issuer.release(next);
        }
    }

    @Test
    void tokenIsTheCreateRevisionOfTheLockKey() throws Exception {
        Lease lease = issuer.acquire(freshResource(), Duration.ofSeconds(10));
        try {
            String key = lease.token().holder().substring(0, lease.token().holder().lastIndexOf('@'));
            assertThat(lease.token().holder()).endsWith("@" + lease.token().value());
            var kvs = client.getKVClient().get(ByteSequence.from(key, StandardCharsets.UTF_8))
                    .get(10, TimeUnit.SECONDS).getKvs();
            assertThat(kvs).hasSize(1);
            assertThat(kvs.get(0).getCreateRevision()).isEqualTo(lease.token().value());
            assertThat(lease.token().holder()).startsWith("/fencing-test/");
        } finally {
            issuer.release(lease);
        }
        assertThat(registry.get("fencing.issuer.acquisitions").tag("issuer", "etcd").tag("outcome", "acquired")
                .counter().count()).isPositive();
    }
}
