package dev.fencing.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.issuer.Lease;
import dev.fencing.testsupport.PartitionProxy;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * A release whose delete fails (etcd unreachable past the background release's wait) and the per-resource turns of
 * the process (from a red-team review). etcd's lock hands a session that asks again for a resource its existing key,
 * so after such a release the next lease here got the last one's token, holder and all.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(90)
class EtcdFailedReleaseTest {

    private static final String PREFIX = "/fencing-failed-release/";
    private EtcdCluster etcd;
    private Client client;

    @BeforeAll
    void start() throws Exception {
        etcd = new EtcdCluster(1);
        client = etcd.client();
    }

    @AfterAll
    void stop() throws Exception {
        client.close();
        etcd.close();
    }

    @Test
    void afterAReleaseWhoseDeleteFailedTheNextTokenIsStillLarger() throws Exception {
        String resource = "failed-release-" + UUID.randomUUID();
        try (PartitionProxy network = new PartitionProxy(etcd.members.get(0).clientPort);
             Client viaProxy = Client.builder().endpoints(network.endpoint()).connectTimeout(Duration.ofSeconds(2))
                     .build()) {
            // a session TTL longer than the outage: etcd keeps the session and its keys through it
            EtcdTokenIssuer issuer = new EtcdTokenIssuer(viaProxy, network.endpoint(), PREFIX,
                    Duration.ofSeconds(40), null);
            try {
                Lease first = issuer.acquire(resource, Duration.ofSeconds(10));
                Lease other = issuer.acquire(resource + "-other", Duration.ofSeconds(10));
                releaseWhilePartitioned(network, first);

                Lease second = issuer.acquire(resource, Duration.ofSeconds(20));
                try {
                    assertThat(second.token().value()).as("the next token after %s", first.token())
                            .isGreaterThan(first.token().value());
                    assertThat(second.token().holder()).isNotEqualTo(first.token().holder());
                    // the session was given up: its other lease is counted lost, not silently kept
                    assertThat(other.isHeld()).isFalse();
                } finally {
                    second.close();
                    other.close();
                }
            } finally {
                issuer.close();
            }
        }
    }

    /**
     * Giving the session up only marked it lost here: its keep-alive went on renewing it, so the key of the failed
     * delete stayed, and another process waited on the resource for as long as this one did not acquire again (a
     * re-trial). The session is now no longer kept alive (and revoked when etcd answers): its key goes within its TTL.
     */
    @Test
    void theKeyOfAFailedReleaseGoesWithinTheSessionTtl() throws Exception {
        String resource = "failed-release-ttl-" + UUID.randomUUID();
        long ttlSeconds = 20;
        try (PartitionProxy network = new PartitionProxy(etcd.members.get(0).clientPort);
             Client viaProxy = Client.builder().endpoints(network.endpoint()).connectTimeout(Duration.ofSeconds(2))
                     .build()) {
            EtcdTokenIssuer issuer = new EtcdTokenIssuer(viaProxy, network.endpoint(), PREFIX,
                    Duration.ofSeconds(ttlSeconds), null);
            EtcdTokenIssuer otherProcess = new EtcdTokenIssuer(client, etcd.endpoints(), PREFIX,
                    Duration.ofSeconds(10), null);
            try {
                Lease first = issuer.acquire(resource, Duration.ofSeconds(10));
                releaseWhilePartitioned(network, first);
                try (Lease theirs = otherProcess.acquire(resource, Duration.ofSeconds(ttlSeconds + 15))) {
                    assertThat(theirs.isHeld()).isTrue();
                    assertThat(theirs.token().value()).isGreaterThan(first.token().value());
                }
            } finally {
                otherProcess.close();
                issuer.close();
            }
        }
    }

    /** Per-entity resources (a key per order) on a long-running issuer leave no per-resource state once released. */
    @Test
    void releasedResourcesLeaveNoTurnBehind() throws Exception {
        EtcdTokenIssuer issuer = new EtcdTokenIssuer(client, etcd.endpoints(), PREFIX, Duration.ofSeconds(10), null);
        try {
            Lease kept = issuer.acquire("order:kept-" + UUID.randomUUID(), Duration.ofSeconds(10));
            for (int i = 0; i < 50; i++) {
                try (Lease lease = issuer.acquire("order:" + UUID.randomUUID(), Duration.ofSeconds(10))) {
                    assertThat(lease.isHeld()).isTrue();
                    assertThat(issuer.resourcesWithTurns()).isGreaterThanOrEqualTo(2);
                }
            }
            // a release hands its turn back when etcd's answer arrives, on jetcd's thread: a moment after close()
            assertThat(settled(issuer, 1)).as("only the held lease's resource").isEqualTo(1);
            kept.close();
            assertThat(settled(issuer, 0)).isZero();
        } finally {
            issuer.close();
        }
    }

    /** The issuer's count of resources with a turn, once it is at most {@code expected} or 5 s have passed. */
    private static int settled(EtcdTokenIssuer issuer, int expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (issuer.resourcesWithTurns() > expected && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        return issuer.resourcesWithTurns();
    }

    /**
     * Releases {@code lease} while {@code network} is cut for longer than the background release waits, so that its
     * delete fails; heals the network and checks that the lease's key outlived the delete.
     */
    private void releaseWhilePartitioned(PartitionProxy network, Lease lease) throws Exception {
        ByteSequence key = ((EtcdTokenIssuer.EtcdLease) lease).key;
        network.partition();
        CompletableFuture.runAsync(lease::close).get(5, TimeUnit.SECONDS); // goes on in the background
        Thread.sleep(EtcdTokenIssuer.RELEASE_WAIT.toMillis() + 2_000); // the delete gives up
        network.heal();
        assertThat(client.getKVClient().get(key).get(10, TimeUnit.SECONDS).getKvs())
                .as("the lease's key outlived its failed delete").isNotEmpty();
    }
}
