package dev.fencing.etcd;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.testsupport.RemoteTokenIssuerContract;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.grpc.Status;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** The issuer contract on one real etcd member. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EtcdTokenIssuerTest extends RemoteTokenIssuerContract {

    private EtcdCluster etcd;
    private Client client;
    private EtcdTokenIssuer issuer;
    private Client unreachableClient;
    private Client otherClient;
    private EtcdTokenIssuer otherIssuer;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @BeforeAll
    void start() throws Exception {
        etcd = new EtcdCluster(1);
        client = etcd.client();
        issuer = new EtcdTokenIssuer(client, etcd.endpoints(), "/fencing-test/", Duration.ofSeconds(5), registry);
        otherClient = etcd.client();
        otherIssuer = new EtcdTokenIssuer(otherClient, etcd.endpoints(), "/fencing-test/", Duration.ofSeconds(5), null);
    }

    @AfterAll
    void stop() throws Exception {
        issuer.close();
        client.close();
        otherIssuer.close();
        otherClient.close();
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
    protected TokenIssuer otherIssuer() {
        return otherIssuer;
    }

    @Override
    protected void afterNextGrant(String resource, Runnable action) {
        issuer.afterGrant = once(resource, action);
    }

    /** Revokes the session lease, as etcd does when no keep-alive arrived within its TTL. */
    @Override
    protected void expire(Lease lease) throws Exception {
        client.getLeaseClient().revoke(EtcdTokenIssuer.sessionLeaseId(lease)).get(10, TimeUnit.SECONDS);
    }

    @Override
    protected MeterRegistry registry() {
        return registry;
    }

    @Override
    protected TokenIssuer unreachableIssuer() {
        unreachableClient = Client.builder().endpoints("http://127.0.0.1:1")
                .connectTimeout(Duration.ofSeconds(1)).build();
        return new EtcdTokenIssuer(unreachableClient, "http://127.0.0.1:1", "/fencing-test/",
                Duration.ofSeconds(5), null);
    }

    @Override
    protected String unreachableServiceName() {
        return "http://127.0.0.1:1";
    }

    @Test
    void anAcquireRightAfterEtcdDroppedTheSessionGetsANewSessionInsteadOfFailing() throws Exception {
        // the keep-alive stream tells the issuer late (every third of the TTL): a lock request in between names a
        // lease etcd no longer knows, and used to fail with "requested lease not found"
        Lease first = issuer.acquire(freshResource(), Duration.ofSeconds(10));
        long oldSession = EtcdTokenIssuer.sessionLeaseId(first);
        client.getLeaseClient().revoke(oldSession).get(10, TimeUnit.SECONDS);
        Lease next = issuer.acquire(freshResource(), Duration.ofSeconds(10));
        try {
            assertThat(EtcdTokenIssuer.sessionLeaseId(next)).isNotEqualTo(oldSession);
            assertThat(next.token().value()).isGreaterThan(first.token().value());
            assertThat(first.isLost()).isTrue();
            assertThat(next.isLost()).isFalse();
        } finally {
            next.close();
            first.close();
        }
    }

    @Test
    void aClosedChannelAndAnUnavailableMemberAreTransientAnInvalidRequestIsNot() {
        // a member stopping under a request: gRPC closes the channel, jetcd reconnects to another member
        assertThat(EtcdTokenIssuer.isTransient(Status.UNKNOWN.withDescription("channel closed").asRuntimeException()))
                .isTrue();
        assertThat(EtcdTokenIssuer.isTransient(Status.UNAVAILABLE.asRuntimeException())).isTrue();
        assertThat(EtcdTokenIssuer.isTransient(Status.UNKNOWN.withDescription("something else").asRuntimeException()))
                .isFalse();
        assertThat(EtcdTokenIssuer.isTransient(Status.INVALID_ARGUMENT.asRuntimeException())).isFalse();
        assertThat(EtcdTokenIssuer.isTransient(new IllegalStateException("channel closed"))).isFalse();
    }

    @Test
    void leaseNotFoundIsRecognisedWhereverJetcdPutsIt() {
        assertThat(EtcdTokenIssuer.leaseNotFound(new RuntimeException("wrapped",
                Status.NOT_FOUND.withDescription("etcdserver: requested lease not found").asRuntimeException())))
                .isTrue();
        assertThat(EtcdTokenIssuer.leaseNotFound(new RuntimeException("etcdserver: requested lease not found")))
                .isTrue();
        assertThat(EtcdTokenIssuer.leaseNotFound(Status.UNAVAILABLE.asRuntimeException())).isFalse();
        assertThat(EtcdTokenIssuer.leaseNotFound(new IllegalStateException("key not found"))).isFalse();
    }

    @Test
    void aRevokedSessionLeaseMarksItsLeasesLostAndANewSessionTakesOver() throws Exception {
        String resource = freshResource();
        Lease lease = issuer.acquire(resource, Duration.ofSeconds(10));
        long sessionLease = EtcdTokenIssuer.sessionLeaseId(lease);
        assertThat(lease.token().holder()).startsWith(Long.toHexString(sessionLease) + "@");
        double lostBefore = registry.get("fencing.issuer.leases.lost").tag("issuer", "etcd").counter().count();

        client.getLeaseClient().revoke(sessionLease).get(10, TimeUnit.SECONDS); // etcd forgets the session
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        // the loss is flagged first and counted right after, on etcd's callback thread: wait for both
        while ((!lease.isLost() || lostCount() < lostBefore + 1) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(lease.isLost()).isTrue();
        Thread.sleep(100); // a second count would arrive by now
        assertThat(lostCount()).isEqualTo(lostBefore + 1);

        lease.close(); // quiet: the key went with the lease
        Lease next = issuer.acquire(resource, Duration.ofSeconds(10));
        try {
            assertThat(next.token().value()).isGreaterThan(lease.token().value());
            assertThat(next.token().holder()).doesNotContain(Long.toHexString(sessionLease));
        } finally {
            next.close();
        }
    }

    /**
     * A timed-out acquire leaves its lock request queued in etcd, under the key every acquire of this issuer's
     * session asks for. When that request is granted late and given back, the next acquire here must not have been
     * handed the same key in between (it would find it deleted, or hold a lock etcd no longer has).
     */
    @Test
    void aLockGrantedAfterItsAcquirerGaveUpIsGivenBackWithoutTakingTheNextAcquirersLock() throws Exception {
        for (int round = 0; round < 5; round++) {
            String resource = freshResource();
            Lease holder = otherIssuer.acquire(resource, Duration.ofSeconds(10));
            assertThat(catchThrowable(() -> issuer.acquire(resource, Duration.ofMillis(200))))
                    .isInstanceOf(LockAcquisitionException.class);
            holder.close();                 // the queued request is granted now, and given back
            Lease next = issuer.acquire(resource, Duration.ofSeconds(10));
            try {
                assertThat(next.token().value()).isGreaterThan(holder.token().value());
                assertThat(next.isLost()).isFalse();
                assertThat(catchThrowable(() -> otherIssuer.acquire(resource, Duration.ofMillis(300))))
                        .as("round %d: the lock is really held by the next acquirer", round)
                        .isInstanceOf(LockAcquisitionException.class);
            } finally {
                next.close();
            }
        }
    }

    private double lostCount() {
        return registry.get("fencing.issuer.leases.lost").tag("issuer", "etcd").counter().count();
    }

    @Test
    void aSessionTtlEtcdCannotKeepIsRefusedNotTruncated() {
        for (Duration ttl : new Duration[] {Duration.ofMillis(1_500), Duration.ofMillis(999), Duration.ZERO}) {
            assertThat(catchThrowable(() -> new EtcdTokenIssuer(client, etcd.endpoints(), "/fencing-test/", ttl, null)))
                    .as("%s", ttl).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("sessionTtl must be a whole number of seconds, at least one (etcd counts leases in "
                            + "seconds), was " + ttl);
        }
    }

    @Test
    void aReadOfWhatWasIssuedThatEtcdDoesNotAnswerNamesTheEndpoints() throws Exception {
        try (Client nowhere = Client.builder().endpoints("http://127.0.0.1:1").connectTimeout(Duration.ofSeconds(1))
                .build()) {
            EtcdTokenIssuer unreachable = new EtcdTokenIssuer(nowhere, "http://127.0.0.1:1", "/fencing-test/",
                    Duration.ofSeconds(5), null);
            assertThat(catchThrowable(() -> unreachable.highestIssued("accounts")))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("etcd at http://127.0.0.1:1 ")
                    .hasMessageContaining("resource 'accounts'");
        }
    }

    @Test
    void lockNamesEncodeOnlyPercentAndSlash() {
        assertThat(EtcdTokenIssuer.lockName("accounts:42 ü锁")).isEqualTo("accounts:42 ü锁"); // unchanged
        assertThat(EtcdTokenIssuer.lockName("tenant/7%")).isEqualTo("tenant%2F7%25");
        assertThat(EtcdTokenIssuer.lockName("a%2Fb")).isNotEqualTo(EtcdTokenIssuer.lockName("a/b"));
    }

    @Test
    void tokenIsTheCreateRevisionOfTheLockKey() throws Exception {
        String resource = freshResource();
        Lease lease = issuer.acquire(resource, Duration.ofSeconds(10));
        try {
            String lease16 = Long.toHexString(EtcdTokenIssuer.sessionLeaseId(lease));
            assertThat(lease.token().holder()).isEqualTo(lease16 + "@" + lease.token().value());
            String key = "/fencing-test/" + resource + "/" + lease16;
            var kvs = client.getKVClient().get(ByteSequence.from(key, StandardCharsets.UTF_8))
                    .get(10, TimeUnit.SECONDS).getKvs();
            assertThat(kvs).hasSize(1);
            assertThat(kvs.get(0).getCreateRevision()).isEqualTo(lease.token().value());
        } finally {
            lease.close();
        }
        assertThat(registry.get("fencing.issuer.acquisitions").tag("issuer", "etcd").tag("outcome", "acquired")
                .counter().count()).isPositive();
    }
}
