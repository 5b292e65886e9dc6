package dev.fencing.etcd;

import dev.fencing.testsupport.Await;
import dev.fencing.testsupport.PartitionProxy;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.lock.LockResponse;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.grpc.Status;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A lock key that disappears while its lease is held. etcd's lock handler deletes the requester's key when the
 * request is cancelled (its member stopping, its connection breaking); when the issuer sent that request again and
 * the retry was granted the same key, the first handler's delete can come after the grant. The issuer must then mark
 * the lease lost (a retried grant is watched), and its release must never delete a key created later by another lease
 * of the same session.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class EtcdLockKeyLossTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String PREFIX = "/fencing-key-loss/";

    private EtcdCluster etcd;
    private Client client;
    private Client otherClient;
    private EtcdTokenIssuer issuer;
    private EtcdTokenIssuer otherIssuer;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @BeforeAll
    void start() throws Exception {
        etcd = new EtcdCluster(1);
        client = etcd.client();
        otherClient = etcd.client();
        issuer = new EtcdTokenIssuer(client, etcd.endpoints(), PREFIX, Duration.ofSeconds(5), registry);
        otherIssuer = new EtcdTokenIssuer(otherClient, etcd.endpoints(), PREFIX, Duration.ofSeconds(5), null);
    }

    @AfterEach
    void realLockRequests() {
        issuer.lockCall = (name, leaseId) -> client.getLockClient().lock(name, leaseId);
    }

    @AfterAll
    void stop() throws Exception {
        issuer.close();
        otherIssuer.close();
        client.close();
        otherClient.close();
        etcd.close();
    }

    @Test
    void aRetriedGrantWhoseKeyIsDeletedLateIsLostAndItsReleaseSparesTheNextHoldersKey() throws Exception {
        String resource = "late-delete-" + UUID.randomUUID();
        AtomicInteger attempts = failFirstAttemptAfterItReachedEtcd();
        Lease first = issuer.acquire(resource, WAIT);
        assertThat(attempts).as("the lock request was sent again").hasValue(2);
        assertThat(keyOf(first)).as("the retry continued the first request's key")
                .extracting(KeyValue::getCreateRevision).isEqualTo(first.token().value());
        double lostBefore = lostCount();

        delete(first);                        // the failed request's handler deletes the key, after the grant
        Await.until(first::isLost);
        Await.until(() -> lostCount() == lostBefore + 1);

        // the lock is free in etcd, and this process's turn was handed on: the next local acquirer gets the same key
        // name (same session) with a new create revision
        Lease next = issuer.acquire(resource, WAIT);
        try {
            assertThat(next.token().value()).isGreaterThan(first.token().value());
            first.close();                    // must delete its own key only, not the next holder's
            assertThat(keyOf(next)).as("the next holder's key survives the lost lease's release")
                    .extracting(KeyValue::getCreateRevision).isEqualTo(next.token().value());
            assertThat(next.isLost()).isFalse();
            assertThat(catchThrowable(() -> otherIssuer.acquire(resource, Duration.ofMillis(300))))
                    .as("the next holder really holds the lock").isInstanceOf(LockAcquisitionException.class);
            assertThat(lostCount()).as("counted once").isEqualTo(lostBefore + 1);
        } finally {
            next.close();
        }
        assertThat(keyOf(next)).as("released").isNull();
    }

    @Test
    void aWatchThatEndsOnItsOwnIsReplacedAndStillSeesTheKeyGo() throws Exception {
        String resource = "watch-ended-" + UUID.randomUUID();
        failFirstAttemptAfterItReachedEtcd();
        EtcdTokenIssuer.EtcdLease lease = (EtcdTokenIssuer.EtcdLease) issuer.acquire(resource, WAIT);
        try {
            var ended = lease.watcher;
            assertThat(ended).isNotNull();
            ended.close();                    // as jetcd ends a watch that etcd compacted past, or lost its leader
            Await.until(() -> lease.watcher != ended);
            assertThat(lease.isLost()).as("the key is still there").isFalse();

            delete(lease);
            Await.until(lease::isLost);
        } finally {
            lease.close();
        }
    }

    @Test
    void releasingARetriedGrantStopsItsWatchAndIsNotALoss() throws Exception {
        String resource = "watch-released-" + UUID.randomUUID();
        failFirstAttemptAfterItReachedEtcd();
        EtcdTokenIssuer.EtcdLease lease = (EtcdTokenIssuer.EtcdLease) issuer.acquire(resource, WAIT);
        assertThat(lease.watcher.isClosed()).isFalse();
        lease.close();
        assertThat(lease.watcher.isClosed()).isTrue();
        assertThat(lease.isLost()).isFalse();
        assertThat(keyOf(lease)).isNull();
    }

    @Test
    void closingTheIssuerOrItsClientStopsTheWatch() throws Exception {
        for (boolean closeIssuer : new boolean[] {true, false}) {
            Client own = etcd.client();
            EtcdTokenIssuer closing = new EtcdTokenIssuer(own, etcd.endpoints(), PREFIX, Duration.ofSeconds(5), null);
            failFirstAttemptAfterItReachedEtcd(closing, own);
            EtcdTokenIssuer.EtcdLease lease = (EtcdTokenIssuer.EtcdLease) closing.acquire(
                    "closing-" + UUID.randomUUID(), WAIT);
            assertThat(lease.watcher.isClosed()).isFalse();
            if (closeIssuer) {
                closing.close();
                own.close();
            } else {
                own.close();
                closing.close();
            }
            Await.until(lease.watcher::isClosed);
            Await.until(lease::isLost);
        }
    }

    @Test
    void aLaterGrantOfAKeyNameARetryExposedIsWatchedToo() throws Exception {
        String resource = "exposed-later-" + UUID.randomUUID();
        failFirstAttemptAfterItReachedEtcd();
        Lease retried = issuer.acquire(resource, WAIT);
        retried.close();
        realLockRequests();

        // granted at the first request, but with the key name the failed request's handler may still delete
        EtcdTokenIssuer.EtcdLease later = (EtcdTokenIssuer.EtcdLease) issuer.acquire(resource, WAIT);
        EtcdTokenIssuer.EtcdLease unrelated = (EtcdTokenIssuer.EtcdLease) issuer.acquire(
                "never-retried-" + UUID.randomUUID(), WAIT);
        try {
            assertThat(unrelated.watcher).as("a resource never retried on this session is not watched").isNull();
            assertThat(later.watcher).isNotNull();
            double lostBefore = lostCount();
            delete(later);                    // the late delete, under a lease that was never retried itself
            Await.until(later::isLost);
            Await.until(() -> lostCount() == lostBefore + 1);
        } finally {
            later.close();
            unrelated.close();
        }
    }

    /**
     * A session this process gave up for lost while etcd still kept it (a new leader renews every lease, so after an
     * outage the old session can outlive its TTL there) is revoked when the new one starts: its keys do not make the
     * new session's request for the same resource wait.
     */
    @Test
    void aSessionGivenUpForLostIsRevokedSoItsKeysDoNotHoldUpTheNext() throws Exception {
        String resource = "session-retired-" + UUID.randomUUID();
        EtcdTokenIssuer.EtcdLease before = (EtcdTokenIssuer.EtcdLease) issuer.acquire(resource, WAIT);
        before.session.markLost(true);        // as when the keep-alive stream failed; etcd keeps the lease alive
        assertThat(before.isLost()).isTrue();
        assertThat(keyOf(before)).as("etcd still has the old session's key").isNotNull();

        Lease after = issuer.acquire(resource, Duration.ofSeconds(3)); // a new session, not queued behind the old
        try {
            assertThat(EtcdTokenIssuer.sessionLeaseId(after)).isNotEqualTo(before.session.leaseId);
            assertThat(after.token().value()).isGreaterThan(before.token().value());
            assertThat(keyOf(before)).as("revoked with its session").isNull();
        } finally {
            after.close();
            before.close();
        }
    }

    @Test
    void aReleaseThatFindsItsKeyGoneCountsTheLeaseLost() throws Exception {
        String resource = "gone-at-release-" + UUID.randomUUID();
        Lease lease = issuer.acquire(resource, WAIT);
        assertThat(((EtcdTokenIssuer.EtcdLease) lease).watcher).as("a first-time grant is not watched").isNull();
        double lostBefore = lostCount();
        delete(lease);                        // an operator's etcdctl del, or a late delete nobody watched
        lease.close();
        assertThat(lease.isLost()).isTrue();
        assertThat(lostCount()).isEqualTo(lostBefore + 1);
    }

    @Test
    void aRetriedGrantWhoseKeyIsDeletedBeforeItIsReadFailsTheAcquireAndLeavesNothingHeld() throws Exception {
        String resource = "deleted-before-read-" + UUID.randomUUID();
        AtomicInteger attempts = new AtomicInteger();
        issuer.lockCall = (name, leaseId) -> {
            CompletableFuture<LockResponse> sent = client.getLockClient().lock(name, leaseId);
            if (attempts.incrementAndGet() == 1) {
                return sent.thenCompose(granted -> CompletableFuture.failedFuture(
                        Status.UNAVAILABLE.withDescription("connection reset").asRuntimeException()));
            }
            // the failed request's handler deletes the key between the retry's grant and the issuer's read
            return sent.thenCompose(granted -> otherClient.getKVClient().delete(granted.getKey())
                    .thenApply(deleted -> granted));
        };
        Throwable failure = catchThrowable(() -> issuer.acquire(resource, WAIT));
        assertThat(failure).isInstanceOf(LockAcquisitionException.class)
                .hasMessageContaining("vanished right after it was granted")
                .hasMessageContaining("sent again after a transient error");
        realLockRequests();
        Lease next = issuer.acquire(resource, WAIT);    // nothing held: neither this process's turn nor etcd's lock
        try {
            assertThat(next.isLost()).isFalse();
            assertThat(((EtcdTokenIssuer.EtcdLease) next).watcher)
                    .as("the retry exposed the session's key name for the resource: later grants are watched too")
                    .isNotNull();
        } finally {
            next.close();
        }
    }

    /**
     * The same path over a real network: a lock request waiting in etcd loses its connection (the proxy drops bytes,
     * then closes the connections that lost some). With jetcd's own retries off, the issuer sees the failure, sends
     * the request again, and watches the grant.
     */
    @Test
    void aLockRequestWhoseConnectionBreaksIsSentAgainAndItsGrantWatched() throws Exception {
        String resource = "connection-broken-" + UUID.randomUUID();
        try (PartitionProxy network = new PartitionProxy(etcd.members.get(0).clientPort);
             Client viaProxy = Client.builder().endpoints(network.endpoint()).retryMaxAttempts(0)
                     .connectTimeout(Duration.ofSeconds(2)).build()) {
            EtcdTokenIssuer cutOff = new EtcdTokenIssuer(viaProxy, network.endpoint(), PREFIX, Duration.ofSeconds(3),
                    null);
            Lease holder = otherIssuer.acquire(resource, WAIT);
            CompletableFuture<Lease> waiting = CompletableFuture.supplyAsync(() -> cutOff.acquire(resource, WAIT));
            try {
                Await.until(() -> keysUnder(resource) == 2);   // the request is queued in etcd behind the holder
                network.partition();
                Thread.sleep(1_500);                           // the session's keep-alives are dropped meanwhile
                network.heal();                                // and the connections that lost them closed
                Thread.sleep(500);
                holder.close();
                EtcdTokenIssuer.EtcdLease lease = (EtcdTokenIssuer.EtcdLease) waiting.get(20, TimeUnit.SECONDS);
                try {
                    assertThat(lease.watcher).as("a retried grant is watched").isNotNull();
                    assertThat(lease.token().value()).isGreaterThan(holder.token().value());
                    assertThat(keyOf(lease)).extracting(KeyValue::getCreateRevision).isEqualTo(lease.token().value());
                    assertThat(lease.isLost()).isFalse();
                } finally {
                    lease.close();
                }
            } finally {
                waiting.cancel(true);
                cutOff.close();
            }
        }
    }

    /**
     * The key is deleted between the issuer's read and the watch's creation, and the watch's stream breaks right after
     * etcd answered "created", before it sent the deletion: jetcd resumes the watch from the revision of that answer,
     * past the deletion, so only the read the issuer makes on the stream's error finds it.
     */
    @Test
    void aDeletionAWatchResumedPastItNeverDeliversIsFoundByTheReadOnTheStreamsError() throws Exception {
        String resource = "resumed-past-" + UUID.randomUUID();
        try (WatchBreakingProxy proxy = new WatchBreakingProxy(etcd.members.get(0).clientPort);
             Client viaProxy = Client.builder().endpoints("http://127.0.0.1:" + proxy.port()).retryMaxAttempts(0)
                     .build()) {
            EtcdTokenIssuer issuer = new EtcdTokenIssuer(viaProxy, "proxy", PREFIX, Duration.ofSeconds(5), null);
            failFirstAttemptAfterItReachedEtcd(issuer, viaProxy);
            ByteSequence keys = ByteSequence.from(PREFIX + resource + "/", StandardCharsets.UTF_8);
            issuer.afterGrant = granted -> {
                try {   // the failed attempt's handler deletes the key after the issuer's read; then another write
                    assertThat(otherClient.getKVClient().delete(keys, DeleteOption.builder().isPrefix(true).build())
                            .get(5, TimeUnit.SECONDS).getDeleted()).isEqualTo(1);
                    otherClient.getKVClient().put(ByteSequence.from(PREFIX + "elsewhere", StandardCharsets.UTF_8),
                            ByteSequence.from("x", StandardCharsets.UTF_8)).get(5, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                proxy.breakNextWatch.set(true);
            };
            try {
                Lease lease = issuer.acquire(resource, WAIT);
                assertThat(((EtcdTokenIssuer.EtcdLease) lease).watcher).isNotNull();
                Await.until(proxy.broke::get);
                Await.until(lease::isLost);
                lease.close();
            } finally {
                issuer.close();
            }
        }
    }

    /**
     * A release whose request is lost with its connection (the proxy drops it, then closes the connection) is sent
     * again and deletes the key: jetcd does not retry a transaction itself.
     */
    @Test
    void aReleaseWhoseConnectionBreaksIsSentAgain() throws Exception {
        String resource = "release-broken-" + UUID.randomUUID();
        throughProxy((network, cutOff) -> {
            Lease lease = cutOff.acquire(resource, WAIT);
            network.partition();
            CompletableFuture<Void> releasing = CompletableFuture.runAsync(lease::close);
            Thread.sleep(1_000);                   // the release's request is dropped meanwhile
            network.heal();                        // and its connection closed
            releasing.get(15, TimeUnit.SECONDS);   // no "Could not release"
            Await.until(() -> keyGone(lease));     // sent again (maybe in the background): the key is deleted
            assertThat(lease.isLost()).isFalse();
        });
    }

    /**
     * A release etcd does not answer (here: a partition) returns to its caller after
     * {@link EtcdTokenIssuer#RELEASE_IN_FOREGROUND} and goes on in the background, keeping this process's turn on the
     * resource: the next local acquirer waits for it, and gets the lock once the delete has landed.
     */
    @Test
    void aReleaseEtcdDoesNotAnswerReturnsAndFinishesInTheBackgroundKeepingTheTurn() throws Exception {
        String resource = "release-background-" + UUID.randomUUID();
        throughProxy((network, cutOff) -> {
            Lease lease = cutOff.acquire(resource, WAIT);
            network.partition();
            CompletableFuture<Void> releasing = CompletableFuture.runAsync(lease::close);
            // returns while etcd is still unreachable (the whole release may take up to 10 s)
            releasing.get(4, TimeUnit.SECONDS);
            assertThat(keyOf(lease)).as("not deleted yet: the request is still in flight").isNotNull();
            assertThat(catchThrowable(() -> cutOff.acquire(resource, Duration.ofMillis(300))))
                    .as("the turn is still the release's").isInstanceOf(LockAcquisitionException.class)
                    .hasMessageContaining("held in this process");

            network.heal();
            Await.until(() -> keyGone(lease));
            Lease next = cutOff.acquire(resource, WAIT);
            try {
                assertThat(next.token().value()).isGreaterThan(lease.token().value());
                assertThat(lease.isLost()).isFalse();
            } finally {
                next.close();
            }
        });
    }

    /** What a test does with an issuer whose client reaches etcd through a proxy it can partition. */
    @FunctionalInterface
    private interface ProxiedIssuerTest {
        void run(PartitionProxy network, EtcdTokenIssuer issuer) throws Exception;
    }

    private void throughProxy(ProxiedIssuerTest test) throws Exception {
        try (PartitionProxy network = new PartitionProxy(etcd.members.get(0).clientPort);
             Client viaProxy = Client.builder().endpoints(network.endpoint()).connectTimeout(Duration.ofSeconds(2))
                     .build()) {
            EtcdTokenIssuer cutOff = new EtcdTokenIssuer(viaProxy, network.endpoint(), PREFIX, Duration.ofSeconds(5),
                    null);
            try {
                test.run(network, cutOff);
            } finally {
                cutOff.close();
            }
        }
    }

    private boolean keyGone(Lease lease) {
        try {
            return keyOf(lease) == null;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private long keysUnder(String resource) {
        try {
            return client.getKVClient().get(ByteSequence.from(PREFIX + resource + "/", StandardCharsets.UTF_8),
                    GetOption.builder().isPrefix(true).withCountOnly(true).build())
                    .get(10, TimeUnit.SECONDS).getCount();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Makes the next lock request of {@link #issuer} reach etcd and then fail as a member stopping under it does. */
    private AtomicInteger failFirstAttemptAfterItReachedEtcd() {
        return failFirstAttemptAfterItReachedEtcd(issuer, client);
    }

    /** Makes the next lock request of {@code target} (on {@code via}) reach etcd and then fail. */
    private static AtomicInteger failFirstAttemptAfterItReachedEtcd(EtcdTokenIssuer target, Client via) {
        AtomicInteger attempts = new AtomicInteger();
        target.lockCall = (name, leaseId) -> {
            CompletableFuture<LockResponse> sent = via.getLockClient().lock(name, leaseId);
            if (attempts.incrementAndGet() > 1) {
                return sent;
            }
            return sent.thenCompose(granted -> CompletableFuture.failedFuture(
                    Status.UNKNOWN.withDescription("channel closed").asRuntimeException()));
        };
        return attempts;
    }

    private ByteSequence key(Lease lease) {
        return ((EtcdTokenIssuer.EtcdLease) lease).key;
    }

    private KeyValue keyOf(Lease lease) throws Exception {
        List<KeyValue> kvs = client.getKVClient().get(key(lease)).get(10, TimeUnit.SECONDS).getKvs();
        return kvs.isEmpty() ? null : kvs.get(0);
    }

    private void delete(Lease lease) throws Exception {
        assertThat(otherClient.getKVClient().delete(key(lease)).get(10, TimeUnit.SECONDS).getDeleted())
                .as("deleted %s", key(lease).toString(StandardCharsets.UTF_8)).isEqualTo(1);
    }

    private double lostCount() {
        return registry.get("fencing.issuer.leases.lost").tag("issuer", "etcd").counter().count();
    }
}
