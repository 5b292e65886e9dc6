package dev.fencing.redisson;

import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.redisson.RedissonTokenIssuer.PersistenceCheck;
import dev.fencing.testsupport.LogRecords;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.config.Config;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A Redis of its own started without persistence ({@code --appendonly no}) and given it at runtime
 * ({@code CONFIG SET appendonly yes}) passes {@code build()}'s check; a restart with the original command line comes
 * back with {@code appendonly no} and the counters empty, and a later {@code CONFIG SET appendonly no} or an
 * {@code allkeys-*} eviction policy were never noticed: the check ran once, at {@code build()}. A red-team finding
 * (S2); the running issuer now reads the settings again and, under {@code REQUIRE_APPEND_ONLY}, refuses every
 * acquisition and fails its probe while a master lacks them, and serves again once they are back (after a restart
 * that emptied Redis, only once the instance is restarted too: its data marker is gone, RedisDataMarkerTest).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class RedisPersistenceRecheckTest {

    private static final Duration T = Duration.ofSeconds(5);

    private OwnRedis redis;
    private RedissonClient client;

    /** The original command line: no persistence. */
    @BeforeAll
    void start() throws Exception {
        redis = OwnRedis.start("recheck", "--save", "", "--appendonly", "no");
        Config config = new Config();
        config.useSingleServer().setAddress(redis.address()).setConnectTimeout(1000).setTimeout(1000)
                .setConnectionMinimumIdleSize(1).setSubscriptionConnectionMinimumIdleSize(1);
        client = Redisson.create(config);
    }

    @AfterAll
    void stop() throws Exception {
        if (client != null) {
            Redis.shutdown(client);
        }
        if (redis != null) {
            redis.close();
        }
    }

    private void config(String name, String value) {
        client.getRedisNodes(RedisNodes.SINGLE).getInstance().setConfig(name, value);
    }

    @Test
    void aRunningIssuerRefusesAcquisitionsOnceAMasterLosesItsPersistenceAndServesAgainWhenItIsBack()
            throws Exception {
        config("appendonly", "yes"); // at runtime only: the command line still says no
        try (RedissonTokenIssuer issuer = RedissonTokenIssuer.builder(client).prefix("recheck:")
                .lossCheckInterval(Duration.ofMillis(100)).persistenceRecheck(Duration.ofMillis(100)).build()) {
            String r = "recheck:1";
            issuer.acquire(r, T).close();

            // a restart with the original command line: appendonly no, every counter gone
            redis.kill();
            redis.restart();
            LockAcquisitionException refused = refusedWith(issuer, "appendonly is 'no'");
            assertThat(refused).hasMessageContaining("127.0.0.1:" + redis.port).hasMessageContaining("fail closed")
                    .hasMessageContaining("CONFIG REWRITE").hasMessageContaining(r);
            assertThat(refused.retryable()).isFalse();
            assertThatThrownBy(issuer::probe).as("health DOWN").isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("appendonly is 'no'");
            assertThat(issuer.isHeld(r)).as("no lock taken by a refused acquire").isFalse();

            config("appendonly", "yes");
            // the restart emptied Redis, the issuer's data marker with it: refused until this instance restarts
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (true) { // the persistence refusal goes with a round of the check, the marker's stays
                LockAcquisitionException still = refusedWith(issuer, "lost data");
                if (!still.getMessage().contains("appendonly is 'no'")) {
                    break;
                }
                assertThat(System.nanoTime()).as("a check found appendonly yes again").isLessThan(deadline);
                Thread.sleep(50);
            }
            assertThatThrownBy(issuer::probe).hasMessageContaining("lost data");
        }
        try (RedissonTokenIssuer issuer = RedissonTokenIssuer.builder(client).prefix("recheck:")
                .lossCheckInterval(Duration.ofMillis(100)).persistenceRecheck(Duration.ofMillis(100)).build()) {
            servedAgain(issuer); // the instance restarted: a new marker
            issuer.probe();

            // a later CONFIG SET appendonly no, then an eviction policy that may evict the counters
            config("appendonly", "no");
            refusedWith(issuer, "appendonly is 'no'");
            config("appendonly", "yes");
            servedAgain(issuer);
            config("maxmemory-policy", "allkeys-lru");
            try {
                refusedWith(issuer, "maxmemory-policy is 'allkeys-lru'");
                assertThatThrownBy(issuer::probe).hasMessageContaining("allkeys-lru");
            } finally {
                config("maxmemory-policy", "noeviction");
            }
            servedAgain(issuer);
        }
    }

    @Test
    void underWarnTheRunningIssuerKeepsHandingOutTokens() throws Exception {
        config("appendonly", "yes");
        try (LogRecords log = LogRecords.of(RedissonTokenIssuer.class);
             RedissonTokenIssuer issuer = RedissonTokenIssuer.builder(client).prefix("recheck-warn:")
                     .persistenceCheck(PersistenceCheck.WARN).persistenceRecheck(Duration.ofMillis(100)).build()) {
            config("appendonly", "no");
            Thread.sleep(1000); // ten rounds of the check: it warns (once), it does not refuse
            issuer.acquire("warn:1", T).close();
            issuer.probe();
            assertThat(log.records()).filteredOn(r -> r.getMessage().contains("appendonly is 'no'"))
                    .singleElement().satisfies(r -> assertThat(r.getMessage()).contains("persistenceCheck WARN"));
        }
    }

    /** Acquires until an acquisition is refused with {@code text}, within 20 s; the refusal. */
    private static LockAcquisitionException refusedWith(RedissonTokenIssuer issuer, String text)
            throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        LockAcquisitionException last = null;
        while (System.nanoTime() < deadline) {
            try {
                issuer.acquire("recheck:1", T).close();
            } catch (LockAcquisitionException e) {
                last = e;
                if (String.valueOf(e.getMessage()).contains(text)) {
                    return e;
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no acquisition refused with \"" + text + "\" within 20 s; last failure: " + last,
                last);
    }

    /** Acquires until an acquisition succeeds, within 20 s. */
    private static void servedAgain(RedissonTokenIssuer issuer) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        RuntimeException last = null;
        while (System.nanoTime() < deadline) {
            try {
                issuer.acquire("recheck:2", T).close();
                return;
            } catch (RuntimeException e) {
                last = e;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no acquisition served again within 20 s; last failure: " + last, last);
    }
}
