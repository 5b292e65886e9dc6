package dev.fencing.redisson;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.recovery.FloorRaise;
import dev.fencing.redisson.RedissonTokenIssuer.PersistenceCheck;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.testsupport.LogRecords;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The data marker: a new user's trial (AOF on) found an S1. App A took tokens up to 4 for {@code accounts:7}, wrote
 * with 1 only, and was paused holding 4; an operator ran {@code FLUSHALL}; app B was handed 1 (refused as duplicate),
 * then 2 and 3 (accepted, B's write acknowledged); A resumed and its write with 4 was accepted over B's. Each issuer
 * only remembered the tokens its own process handed out, and the persistence re-check ({@code CONFIG GET}) cannot see
 * a flush. Now every issuer reads the prefix's marker with each lock request, and a marker gone or changed refuses
 * every acquisition of that issuer (and fails its probe) until it is restarted. Each test runs on a Redis of its own.
 */
@Timeout(90)
class RedisDataMarkerTest {

    private static final Duration T = Duration.ofSeconds(5);
    private static final String PREFIX = "trial:";
    private static final String R = "accounts:7";

    private OwnRedis redis;
    private final List<RedissonClient> clients = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        redis = OwnRedis.start("marker", "--save", "", "--appendonly", "yes");
    }

    @AfterEach
    void stop() throws Exception {
        for (RedissonClient client : clients) {
            Redis.shutdown(client);
        }
        if (redis != null) {
            redis.close();
        }
    }

    /** A client of its own (an application instance). */
    private RedissonClient client() {
        Config config = new Config();
        config.useSingleServer().setAddress(redis.address()).setConnectTimeout(1000).setTimeout(1000)
                .setConnectionMinimumIdleSize(1).setSubscriptionConnectionMinimumIdleSize(1);
        RedissonClient client = Redisson.create(config);
        clients.add(client);
        return client;
    }

    private RedissonTokenIssuer issuer(RedissonClient client) {
        return RedissonTokenIssuer.builder(client).prefix(PREFIX).build();
    }

    private String markerValue(RedissonClient client) {
        return client.<String>getBucket(RedisKeys.markerKey(PREFIX), StringCodec.INSTANCE).get();
    }

    private void assertLostDataRefusal(Throwable refused) {
        assertThat(refused).isInstanceOf(LockAcquisitionException.class)
                .hasMessageContaining("lost data since this issuer started")
                .hasMessageContaining("127.0.0.1:" + redis.port).hasMessageContaining("key prefix '" + PREFIX + "'")
                .hasMessageContaining("'" + PREFIX + "\\x1emarker'").hasMessageContaining("floor raise")
                .hasMessageContaining("margin").hasMessageContaining("restart every instance");
        assertThat(((LockAcquisitionException) refused).retryable()).as("retryable").isFalse();
    }

    @Test
    void theTrialFlushAllWhileAZombieHoldsToken4NoLongerLetsReissuedTokensBeOverwritten() throws Throwable {
        try (RedissonTokenIssuer a = issuer(client()); RedissonTokenIssuer b = issuer(client())) {
            InMemoryFenceStore store = new InMemoryFenceStore();
            AtomicReference<String> row = new AtomicReference<>();
            try (Lease first = a.acquire(R, T)) {
                store.fence(R, first.token(), () -> row.getAndSet("A1"));
            }
            a.acquire(R, T).close();
            a.acquire(R, T).close();
            Lease zombie = a.acquire(R, T); // kill -STOP: holds token 4, has not written with it
            assertThat(zombie.token().value()).isEqualTo(4);

            redis.cli("FLUSHALL");

            List<String> acknowledged = new ArrayList<>();
            List<Throwable> refused = new ArrayList<>();
            for (int i = 0; i < 3; i++) { // the trial: 1 (duplicate), 2 and 3 (accepted)
                try (Lease lease = b.acquire(R, T)) {
                    FencingToken token = lease.token();
                    store.fence(R, token, () -> row.getAndSet("B" + token.value()));
                    acknowledged.add("B" + token.value());
                } catch (LockAcquisitionException e) {
                    refused.add(e);
                } catch (TokenRejectedException e) {
                    // the fence refused it: not acknowledged
                }
            }
            // A resumes and writes with the token it holds
            store.fence(R, zombie.token(), () -> row.getAndSet("A4"));
            assertThat(acknowledged).as("B's acknowledged writes, which A's token 4 then overwrote").isEmpty();
            assertThat(refused).hasSize(3).allSatisfy(this::assertLostDataRefusal);
            assertThatThrownBy(() -> a.acquire(R, T)).as("A's own issuer too")
                    .satisfies(this::assertLostDataRefusal);
            assertThat(a.isHeld(R)).as("no refused acquire kept the lock").isFalse();
            assertThat(markerValue(clients.get(0))).as("no running issuer writes the marker again").isNull();

            // the runbook: the floor raise (max_seen 4 plus a margin) on a refusing instance, then the restarts
            new FloorRaise(store, store, a, new AdminMetrics(new SimpleMeterRegistry())).raiseAll(4 + 10, "ops");
            try (RedissonTokenIssuer restartedB = issuer(clients.get(1)); Lease lease = restartedB.acquire(R, T)) {
                assertThat(lease.token().value()).isEqualTo(15);
                store.fence(R, lease.token(), () -> row.getAndSet("B15"));
            }
            assertThatThrownBy(() -> store.fence(R, zombie.token(), () -> row.getAndSet("A4 again")))
                    .isInstanceOf(StaleTokenException.class);
            assertThat(row.get()).isEqualTo("B15");
            zombie.close();
        }
    }

    /**
     * An acquire already waiting for the lock when Redis is flushed: its marker read went out with its first lock
     * request, before the flush, and the script that grants it runs afterwards (once the flushed lock's TTL ends), so
     * the marker is read again after such a grant.
     */
    @Test
    void anAcquireWaitingForTheLockDuringTheFlushIsRefusedAfterItIsGranted() throws Exception {
        RedissonClient clientA = client();
        try (RedissonTokenIssuer a = RedissonTokenIssuer.builder(clientA).prefix(PREFIX)
                .leaseTime(Duration.ofSeconds(2)).build(); RedissonTokenIssuer b = issuer(client())) {
            for (int i = 0; i < 3; i++) {
                a.acquire(R, T).close();
            }
            Lease zombie = a.acquire(R, T);
            assertThat(zombie.token().value()).isEqualTo(4);
            CompletableFuture<Object> waiting = CompletableFuture.supplyAsync(() -> {
                try (Lease lease = b.acquire(R, Duration.ofSeconds(30))) {
                    return lease.token();
                } catch (RuntimeException e) {
                    return e;
                }
            });
            String channel = "redisson_lock__channel:{" + RedisKeys.lockKey(PREFIX, R) + "}";
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (!redis.cli("PUBSUB", "NUMSUB", channel).endsWith("1")) { // B waits for the unlock message
                assertThat(System.nanoTime()).as("B waiting on " + channel).isLessThan(deadline);
                Thread.sleep(20);
            }
            redis.cli("FLUSHALL");
            Object outcome = waiting.get(60, TimeUnit.SECONDS);
            assertThat(outcome).as("B's acquire, granted by a script run after the flush")
                    .isInstanceOf(LockAcquisitionException.class);
            assertLostDataRefusal((Throwable) outcome);
            assertThat(b.isHeld(R)).as("the lock was given back").isFalse();
        }
    }

    @Test
    void aDeletedMarkerRefusesEveryAcquireFailsTheProbeAndIsNotWrittenAgain() throws Exception {
        RedissonClient client = client();
        try (LogRecords log = LogRecords.of(RedissonTokenIssuer.class); RedissonTokenIssuer issuer = issuer(client)) {
            issuer.acquire(R, T).close();
            issuer.probe();
            client.getBucket(RedisKeys.markerKey(PREFIX)).delete(); // the counters are still there
            assertThatThrownBy(() -> issuer.acquire("accounts:8", T)).satisfies(this::assertLostDataRefusal)
                    .hasMessageContaining("is gone");
            assertThatThrownBy(issuer::probe).as("health DOWN").isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("lost data since this issuer started");
            assertThat(markerValue(client)).as("not written again").isNull();
            assertThat(log.records()).filteredOn(r -> r.getMessage().contains("lost data")).hasSize(1);
        }
    }

    @Test
    void theRefusalIsStickyUntilARestartEvenWhenTheMarkerComesBack() throws Exception {
        RedissonClient client = client();
        try (RedissonTokenIssuer issuer = issuer(client)) {
            issuer.acquire(R, T).close();
            String original = markerValue(client);
            client.<String>getBucket(RedisKeys.markerKey(PREFIX), StringCodec.INSTANCE).set("another instance's");
            assertThatThrownBy(() -> issuer.acquire(R, T)).satisfies(this::assertLostDataRefusal)
                    .hasMessageContaining("holds 'another instance's', not '" + original + "'");
            client.<String>getBucket(RedisKeys.markerKey(PREFIX), StringCodec.INSTANCE).set(original);
            issuer.raiseTokenFloor(R, 100); // the recovery's floor raise still works on a refusing issuer
            for (int i = 0; i < 5; i++) {
                assertThatThrownBy(() -> issuer.acquire(R, T)).as("acquire %s after the marker came back", i)
                        .satisfies(this::assertLostDataRefusal);
            }
            assertThatThrownBy(issuer::probe).hasMessageContaining("lost data since this issuer started");
        }
        try (RedissonTokenIssuer restarted = issuer(client)) {
            try (Lease lease = restarted.acquire(R, T)) {
                assertThat(lease.token().value()).as("after the raise, in a restarted instance").isEqualTo(101);
            }
            restarted.probe();
        }
    }

    /** Health DOWN without an acquire: the probe and the 10 s check read the marker too. */
    @Test
    void theProbeAndThePeriodicCheckSeeALossWithoutAnAcquire() throws Exception {
        RedissonClient client = client();
        try (LogRecords log = LogRecords.of(RedissonTokenIssuer.class);
             RedissonTokenIssuer probed = issuer(client);
             RedissonTokenIssuer checked = RedissonTokenIssuer.builder(client()).prefix(PREFIX)
                     .persistenceRecheck(Duration.ofMillis(50)).build()) {
            probed.probe();
            checked.probe();
            redis.cli("FLUSHALL");
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (log.records().stream().noneMatch(r -> r.getMessage().contains("lost data"))) {
                assertThat(System.nanoTime()).as("the periodic check, with no acquire or probe, found the loss")
                        .isLessThan(deadline);
                Thread.sleep(20);
            }
            redis.cli("SET", RedisKeys.markerKey(PREFIX), "written later"); // the marker back: the check's verdict
            assertThatThrownBy(() -> checked.acquire(R, T)).satisfies(this::assertLostDataRefusal)
                    .hasMessageContaining("is gone");
            assertThatThrownBy(checked::probe).hasMessageContaining("is gone");
            assertThatThrownBy(probed::probe).as("the probe reads the marker itself")
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("lost data since this issuer started")
                    .hasMessageContaining("holds 'written later'");
            redis.cli("DEL", RedisKeys.markerKey(PREFIX));
            assertThatThrownBy(probed::probe).as("sticky").hasMessageContaining("holds 'written later'");
        }
    }

    /**
     * A restart of a Redis without persistence under a running issuer: the restart emptied it, the marker with it.
     * (Before, an issuer refused only the resources it had locked itself, as "went back", and served again after a
     * few refusals: another instance's tokens were not known to it.)
     */
    @Test
    void aRestartWithoutPersistenceIsALoss() throws Exception {
        try (OwnRedis volatileRedis = OwnRedis.start("marker-restart", "--save", "", "--appendonly", "no")) {
            Config config = new Config();
            config.useSingleServer().setAddress(volatileRedis.address()).setConnectTimeout(1000).setTimeout(1000)
                    .setConnectionMinimumIdleSize(1).setSubscriptionConnectionMinimumIdleSize(1);
            RedissonClient client = Redisson.create(config);
            clients.add(client);
            try (RedissonTokenIssuer issuer = RedissonTokenIssuer.builder(client).prefix(PREFIX)
                    .persistenceCheck(PersistenceCheck.WARN).build()) {
                issuer.acquire(R, T).close();
                volatileRedis.kill();
                volatileRedis.restart();
                Throwable refused = null;
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (refused == null) { // the client reconnects first
                    try {
                        issuer.acquire("accounts:never-locked-here", T).close();
                        throw new AssertionError("a token was handed out after the restart emptied Redis");
                    } catch (LockAcquisitionException e) {
                        if (String.valueOf(e.getMessage()).contains("lost data")) {
                            refused = e;
                        }
                    }
                    assertThat(System.nanoTime()).as("refused within 20 s").isLessThan(deadline);
                    Thread.sleep(20);
                }
                assertThat(refused).hasMessageContaining("127.0.0.1:" + volatileRedis.port)
                        .hasMessageContaining("is gone");
            }
        }
    }

    /**
     * A Redis that lost its data while no instance ran: the first to start writes a new marker and hands out tokens
     * from 1 (caught only by the starter's IssuerCounterCheck and the fence store, docs/issuers.md); later instances
     * find that marker and never overwrite it.
     */
    @Test
    void theFirstInstanceWritesTheMarkerAndLaterOnesFindIt() throws Exception {
        RedissonClient first = client();
        RedissonClient second = client();
        redis.cli("FLUSHALL"); // before any instance started
        try (RedissonTokenIssuer one = issuer(first)) {
            String written = markerValue(first);
            assertThat(written).as("written at build").isNotBlank();
            try (RedissonTokenIssuer two = issuer(second)) {
                assertThat(markerValue(second)).as("SET NX: the second build keeps it").isEqualTo(written);
                try (Lease lease = one.acquire(R, T)) {
                    assertThat(lease.token().value()).as("not seen by the marker: a new start").isEqualTo(1);
                }
                two.acquire(R, T).close();
                one.probe();
                two.probe();
            }
        }
    }

    /**
     * Redisson reads from replicas by default ({@code ReadMode.SLAVE}) in master-slave, sentinel and cluster setups. A
     * replica that lags, or lost its data and has not synced yet (here: detached and flushed), must not make every
     * instance refuse for good: the marker is read on the master, where the lock script runs.
     */
    @Test
    void theMarkerIsReadOnTheMasterNotOnAReplicaThatLacksIt() throws Exception {
        try (OwnRedis replica = OwnRedis.start("marker-replica", "--save", "", "--appendonly", "yes",
                "--replicaof", "127.0.0.1", String.valueOf(redis.port))) {
            for (int i = 0; !replica.cli("role").contains("connected"); i++) {
                assertThat(i).as("the replica in sync within 20 s").isLessThan(200);
                Thread.sleep(100);
            }
            Config config = new Config();
            config.setCheckLockSyncedSlaves(false); // the detached replica confirms nothing
            config.useMasterSlaveServers().setMasterAddress(redis.address()).addSlaveAddress(replica.address())
                    .setTimeout(2000).setMasterConnectionMinimumIdleSize(1).setSlaveConnectionMinimumIdleSize(1)
                    .setSubscriptionConnectionMinimumIdleSize(1);
            RedissonClient client = Redisson.create(config);
            clients.add(client);
            replica.cli("CONFIG", "SET", "appendonly", "yes");
            try (RedissonTokenIssuer issuer = RedissonTokenIssuer.builder(client).prefix(PREFIX)
                    .persistenceCheck(PersistenceCheck.WARN).build()) {
                issuer.acquire(R, T).close();
                assertThat(replica.cli("REPLICAOF", "NO", "ONE")).isEqualTo("OK");
                assertThat(replica.cli("FLUSHALL")).isEqualTo("OK"); // the replica's copy gone, the master's kept
                try (Lease lease = issuer.acquire(R, T)) {
                    assertThat(lease.token().value()).isEqualTo(2);
                }
                issuer.probe();
                issuer.recheckMarker();
                issuer.acquire(R, T).close();
                // the same for a family's floor, read beside each lock request of a keyed resource: on the master
                issuer.raiseFamilyFloor("ledger", 40);
                try (Lease lease = issuer.acquire("ledger:1", T)) {
                    assertThat(lease.token().value()).as("above the floor the replica never saw").isEqualTo(41);
                }
            }
        }
    }

    /** The marker key is none of a resource's keys: no lock key, family floor key or another prefix's marker. */
    @Test
    void theMarkerKeyNeverCollidesWithAResourcesKeys() throws Exception {
        String marker = RedisKeys.markerKey(PREFIX);
        for (String resource : List.of("marker", "%1Emarker", "x", ":marker", "accounts:marker", "{marker}")) {
            assertThat(RedisKeys.lockKey(PREFIX, resource)).isNotEqualTo(marker);
            assertThat(RedisKeys.familyFloorKey(PREFIX, resource)).isNotEqualTo(marker);
        }
        assertThat(RedisKeys.familyFloorKey(PREFIX, "\u001emarke")).isNotEqualTo(marker); // floor keys end in U+001F
        assertThat(RedisKeys.markerKey("trial:\u001emarker")).isNotEqualTo(RedisKeys.markerKey(PREFIX));
        assertThat(marker).as("no resource has it in its lock key").matches(k -> k.chars()
                .anyMatch(Character::isISOControl)).doesNotEndWith("\u001f").doesNotContain("{");
        assertThatThrownBy(() -> RedisKeys.checkPrefix("trial:\u001e")).isInstanceOf(IllegalArgumentException.class);
        RedissonClient client = client();
        try (RedissonTokenIssuer issuer = issuer(client)) {
            String before = markerValue(client);
            assertThatThrownBy(() -> issuer.acquire("\u001emarker", T)).as("no resource is the marker's name")
                    .isInstanceOf(IllegalArgumentException.class);
            issuer.raiseFamilyFloor("\u001emarker", 7);
            issuer.raiseFamilyFloor("marker", 7);
            try (Lease lease = issuer.acquire("marker:1", T)) { // its family floor, raised above
                assertThat(lease.token().value()).isEqualTo(8);
            }
            issuer.acquire("marker", T).close();
            assertThat(markerValue(client)).as("the marker untouched").isEqualTo(before);
            assertThat(client.getKeys().countExists(RedisKeys.markerKey(PREFIX))).isEqualTo(1);
            issuer.probe();
        }
    }
}
