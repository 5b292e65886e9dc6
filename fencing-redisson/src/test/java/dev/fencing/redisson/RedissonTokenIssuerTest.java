package dev.fencing.redisson;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.redisson.RedissonTokenIssuer.PersistenceCheck;
import dev.fencing.testsupport.RemoteTokenIssuerContract;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The issuer contract on the real Redis (127.0.0.1:6379), watchdog mode (no lease time), plus what is particular to
 * Redisson: leases released from another thread, no re-entry within a thread, the watchdog, key names, the startup
 * checks.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedissonTokenIssuerTest extends RemoteTokenIssuerContract {

    private static final long WATCHDOG_MS = 1500;

    private final String prefix = Redis.prefix("contract");
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private RedissonClient client;
    private RedissonClient otherClient;
    private RedissonClient unreachableClient;
    private RedissonTokenIssuer issuer;
    private RedissonTokenIssuer otherIssuer;

    @BeforeAll
    void start() {
        client = Redis.client(WATCHDOG_MS);
        otherClient = Redis.client(WATCHDOG_MS);
        issuer = builder(client).meterRegistry(registry).build();
        otherIssuer = builder(otherClient).build();
    }

    private RedissonTokenIssuer.Builder builder(RedissonClient redisson) {
        return RedissonTokenIssuer.builder(redisson).prefix(prefix).lossCheckInterval(Duration.ofMillis(50))
                .persistenceCheck(PersistenceCheck.WARN); // the shared Redis runs without persistence
    }

    @AfterAll
    void stop() {
        issuer.close();
        otherIssuer.close();
        Redis.deleteAll(client, prefix);
        Redis.shutdown(client);
        Redis.shutdown(otherClient);
        if (unreachableClient != null) {
            Redis.shutdown(unreachableClient);
        }
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

    /** Deletes the lock key, as Redis does once the watchdog stopped renewing it and its TTL ran out. */
    @Override
    protected void expire(Lease lease) {
        client.getKeys().delete(RedisKeys.lockKey(prefix, lease.token().resource()));
    }

    @Override
    protected MeterRegistry registry() {
        return registry;
    }

    @Override
    protected TokenIssuer unreachableIssuer() {
        unreachableClient = Redis.unreachable();
        return RedissonTokenIssuer.builder(unreachableClient).prefix(prefix).withoutStartupChecks().build();
    }

    @Override
    protected String unreachableServiceName() {
        return "127.0.0.1:1";
    }

    @Test
    @Timeout(30)
    void aLeaseClosedOnAnotherThreadReleasesTheLock() throws Exception {
        String r = freshResource();
        Lease lease = CompletableFuture.supplyAsync(() -> issuer.acquire(r, Duration.ofSeconds(5)))
                .get(10, TimeUnit.SECONDS); // acquired on a pool thread
        lease.close();                   // released on this one (RFencedLock alone would refuse: not its thread)
        assertThat(lease.isReleased()).isTrue();
        assertThat(lease.isLost()).isFalse();
        try (Lease next = otherIssuer.acquire(r, Duration.ofMillis(500))) {
            assertThat(next.token().value()).isGreaterThan(lease.token().value());
        }
    }

    @Test
    @Timeout(30)
    void twoAcquisitionsInOneThreadDoNotReEnter() {
        String r = freshResource();
        try (Lease first = issuer.acquire(r, Duration.ofSeconds(5))) {
            // a plain RFencedLock is reentrant per thread: it would grant this and hand out a second token
            assertThatThrownBy(() -> issuer.acquire(r, Duration.ofMillis(300)))
                    .isInstanceOf(LockAcquisitionException.class).hasMessageContaining(r);
            assertThat(first.isHeld()).isTrue();
        }
    }

    @Test
    @Timeout(30)
    void theWatchdogKeepsALockWithoutLeaseTimePastItsTimeout() throws Exception {
        String r = freshResource();
        try (Lease lease = issuer.acquire(r, Duration.ofSeconds(5))) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WATCHDOG_MS * 2);
            while (System.nanoTime() < deadline) { // two watchdog timeouts: renewed, never lost
                assertThat(lease.isLost()).isFalse();
                Thread.sleep(100);
            }
            assertThat(client.getKeys().remainTimeToLive(RedisKeys.lockKey(prefix, r))).isPositive();
            assertThatThrownBy(() -> otherIssuer.acquire(r, Duration.ofMillis(200)))
                    .isInstanceOf(LockAcquisitionException.class);
        }
    }

    @Test
    @Timeout(30)
    void aLeaseTimeExpiresTheLockAndReportsTheLeaseLostOnce() throws Exception {
        SimpleMeterRegistry counted = new SimpleMeterRegistry();
        try (RedissonTokenIssuer timed = builder(client).leaseTime(Duration.ofMillis(400)).meterRegistry(counted)
                .build()) {
            String r = freshResource();
            Lease lease = timed.acquire(r, Duration.ofSeconds(5));
            assertThat(lease.isHeld()).isTrue();
            Lease next = otherIssuer.acquire(r, Duration.ofSeconds(10)); // granted once Redis expired the lock
            try {
                assertThat(lease.isLost()).isTrue();
                assertThat(next.token().value()).isGreaterThan(lease.token().value());
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (lost(counted) < 1 && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                lease.close(); // quiet, and not counted twice
                assertThat(lost(counted)).isEqualTo(1);
                assertThat(next.isHeld()).isTrue();
            } finally {
                next.close();
            }
        }
    }

    private static double lost(SimpleMeterRegistry registry) {
        var counter = registry.find("fencing.issuer.leases.lost").tag("issuer", "redisson").counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    @Timeout(30)
    void tokensLiveInRedissonsTokenKeyAndResourcesMapToDistinctBraceFreeKeys() {
        String base = freshResource();
        String[] resources = {base + "{a}", base + "%7Ba%7D", base + "ü-账户-😀", base + "%"};
        for (String r : resources) {
            String key = RedisKeys.lockKey(prefix, r);
            assertThat(key.substring(prefix.length())).doesNotContain("{", "}");
            try (Lease lease = issuer.acquire(r, Duration.ofSeconds(5))) {
                assertThat(client.getKeys().countExists(key)).isEqualTo(1);
                String counter = (String) client.getBucket(RedisKeys.tokenKey(key), StringCodec.INSTANCE).get();
                assertThat(counter).isEqualTo(Long.toString(lease.token().value()));
            }
        }
        assertThat(RedisKeys.lockKey(prefix, resources[0])).isNotEqualTo(RedisKeys.lockKey(prefix, resources[1]));
        assertThat(RedisKeys.lockKey("p:", "a%7Bb")).isNotEqualTo(RedisKeys.lockKey("p:", "a{b"));
    }

    @Test
    @Timeout(30)
    void releaseDeletesTheLockKeyButTheTokenKeyStaysForEver() {
        String r = "accounts:" + freshResource().substring("issuer-contract-".length(), 24); // accounts:xxxxxxxx
        String key = RedisKeys.lockKey(prefix, r);
        long token;
        try (Lease lease = issuer.acquire(r, Duration.ofSeconds(5))) {
            token = lease.token().value();
        }
        assertThat(client.getKeys().countExists(key)).as("the lock hash is gone").isZero();
        var counter = client.getBucket(RedisKeys.tokenKey(key), StringCodec.INSTANCE);
        assertThat(counter.get()).as("Redisson's issue 6510: the counter stays").isEqualTo(Long.toString(token));
        assertThat(counter.remainTimeToLive()).as("and has no TTL").isEqualTo(-1);
        assertThat(issuer.highestIssued(r)).isEqualTo(token);
        // docs/issuers.md: about 100-140 bytes per resource ever locked (MEMORY USAGE, Redis 7)
        assertThat(counter.sizeInMemory()).isBetween(48L, 200L);
    }

    @Test
    @Timeout(30)
    void withoutAppendOnlyPersistenceTheDefaultRefusesToStartNamingTheSetting() {
        String appendOnly = client.getRedisNodes(org.redisson.api.redisnode.RedisNodes.SINGLE).getInstance()
                .getConfig("appendonly").get("appendonly");
        if ("yes".equals(appendOnly)) {
            RedissonTokenIssuer.builder(client).prefix(prefix).build().close(); // durable: starts
            return;
        }
        assertThatThrownBy(() -> RedissonTokenIssuer.builder(client).prefix(prefix).build())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("appendonly is 'no' on")
                .hasMessageContaining("6379")
                .hasMessageContaining("PersistenceCheck.WARN");
    }

    @Test
    @Timeout(30)
    void badConfigurationFailsWhenBuiltNamingTheValue() {
        assertThatThrownBy(() -> RedissonTokenIssuer.builder(client).prefix("locks:{tenant}:"))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("locks:{tenant}:");
        assertThatThrownBy(() -> RedissonTokenIssuer.builder(client).leaseTime(Duration.ZERO))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> RedissonTokenIssuer.builder(client).lossCheckInterval(Duration.ofMillis(1)))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("lossCheckInterval");
        RedissonClient nowhere = Redis.unreachable();
        try {
            for (PersistenceCheck check : PersistenceCheck.values()) { // no Redis: no start, whatever the check
                assertThatThrownBy(() -> RedissonTokenIssuer.builder(nowhere).persistenceCheck(check).build())
                        .isInstanceOf(FencingConfigurationException.class)
                        .hasMessageContaining("redis://127.0.0.1:1").hasMessageContaining("did not answer");
            }
        } finally {
            Redis.shutdown(nowhere);
        }
        RedissonClient closed = Redis.client(WATCHDOG_MS);
        Redis.shutdown(closed);
        assertThatThrownBy(() -> RedissonTokenIssuer.builder(closed).build())
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("shut down");
    }
}
