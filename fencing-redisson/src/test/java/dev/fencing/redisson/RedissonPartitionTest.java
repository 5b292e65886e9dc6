package dev.fencing.redisson;

import dev.fencing.testsupport.Await;
import dev.fencing.testsupport.PartitionProxy;

import dev.fencing.issuer.Lease;
import dev.fencing.redisson.RedissonTokenIssuer.PersistenceCheck;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/**
 * Watchdog mode cut off from Redis (a silent partition through a proxy): the watchdog cannot renew, Redis expires
 * the lock after {@code lockWatchdogTimeout}, and the issuer, which cannot ask Redis either, reports the lease lost
 * once no check confirmed it for that long. Another client then takes the lock with a larger token.
 */
class RedissonPartitionTest {

    private static final long WATCHDOG_MS = 1500;

    @Test
    @Timeout(60)
    void aHolderCutOffFromRedisIsReportedLostAndItsLockExpires() throws Exception {
        String prefix = Redis.prefix("partition");
        RedissonClient direct = Redis.client(WATCHDOG_MS);
        try (PartitionProxy proxy = new PartitionProxy(6379)) {
            Config config = new Config();
            config.setLockWatchdogTimeout(WATCHDOG_MS);
            config.useSingleServer().setAddress("redis://127.0.0.1:" + proxy.port()).setConnectTimeout(1000)
                    .setTimeout(1000).setConnectionMinimumIdleSize(1).setSubscriptionConnectionMinimumIdleSize(1);
            RedissonClient cutOff = Redisson.create(config);
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            try (RedissonTokenIssuer holder = RedissonTokenIssuer.builder(cutOff).prefix(prefix)
                    .lossCheckInterval(Duration.ofMillis(100)).persistenceCheck(PersistenceCheck.WARN)
                    .meterRegistry(registry).build();
                 RedissonTokenIssuer other = RedissonTokenIssuer.builder(direct).prefix(prefix)
                         .persistenceCheck(PersistenceCheck.WARN).build()) {
                String resource = "accounts:7";
                String key = RedisKeys.lockKey(prefix, resource);
                Lease lease = holder.acquire(resource, Duration.ofSeconds(5));
                Thread.sleep(WATCHDOG_MS); // confirmed and renewed while connected
                assertThat(lease.isLost()).isFalse();

                proxy.partition();
                long cut = System.nanoTime();
                Await.until(() -> direct.getKeys().countExists(key) == 0); // Redis expired it: no renewal got through
                // flagged first, counted right after on Redisson's thread: wait for both
                Await.until(() -> lease.isLost() && registry.get("fencing.issuer.leases.lost")
                        .tag("issuer", "redisson").counter().count() >= 1);
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cut))
                        .as("not before the watchdog timeout").isGreaterThanOrEqualTo(WATCHDOG_MS);
                assertThat(registry.get("fencing.issuer.leases.lost").tag("issuer", "redisson").counter().count())
                        .isEqualTo(1);
                try (Lease next = other.acquire(resource, Duration.ofSeconds(5))) {
                    assertThat(next.token().value()).isGreaterThan(lease.token().value());
                }
                proxy.heal();
                assertThatCode(lease::close).doesNotThrowAnyException(); // quiet for a lost lease
            } finally {
                Redis.shutdown(cutOff);
            }
        } finally {
            Redis.deleteAll(direct, prefix);
            Redis.shutdown(direct);
        }
    }
}
