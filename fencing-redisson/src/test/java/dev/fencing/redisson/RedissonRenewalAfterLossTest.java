package dev.fencing.redisson;

import dev.fencing.issuer.Lease;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.redisson.api.RedissonClient;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redisson's watchdog renews a lock name through the first owner it registered for it, and stops renewing the name
 * when that owner's field is gone: a lease lost without its release (its lock deleted by hand) whose resource the same
 * process locks again before it is closed could have left the new lease unrenewed, lost after one watchdog timeout.
 * A red-team check; it held (the new lease is renewed).
 */
@Timeout(60)
class RedissonRenewalAfterLossTest {

    private static final long WATCHDOG = 6_000; // renewed every 2 s: a margin of 4 s for a loaded machine

    @Test
    void aLeaseLostWithoutItsReleaseDoesNotStopTheWatchdogOfTheNextLeaseOfItsResource() throws Exception {
        RedissonClient redisson = Redis.client(WATCHDOG);
        String prefix = Redis.prefix("renewal");
        try (RedissonTokenIssuer issuer = RedissonTokenIssuer.builder(redisson).prefix(prefix)
                .lossCheckInterval(Duration.ofMillis(50))
                .persistenceCheck(RedissonTokenIssuer.PersistenceCheck.WARN).build()) {
            String r = "renewal:1";
            String key = RedisKeys.lockKey(prefix, r);
            Lease first = issuer.acquire(r, Duration.ofSeconds(5));
            // wait for a renewal of the watchdog (the lock's TTL jumps back up), so the next one is a third away
            long last = redisson.getBucket(key).remainTimeToLive();
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (true) {
                long ttl = redisson.getBucket(key).remainTimeToLive();
                if (ttl > last + 200) {
                    break;
                }
                last = ttl;
                assertThat(System.nanoTime()).as("a renewal within 10 s").isLessThan(deadline);
                Thread.sleep(10);
            }
            redisson.getKeys().delete(key); // an operator frees a lock that looked stuck
            Lease second = issuer.acquire(r, Duration.ofSeconds(5)); // the same process locks the resource again
            long waitLost = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (!first.isLost() && System.nanoTime() < waitLost) {
                Thread.sleep(10);
            }
            assertThat(first.isLost()).isTrue();
            Thread.sleep(WATCHDOG + 1_500); // past the lock's TTL: only renewals keep it
            assertThat(second.isLost()).as("the second lease, renewed by the watchdog").isFalse();
            assertThat(redisson.getKeys().countExists(key)).as("its lock key").isEqualTo(1);
            second.close();
            first.close();
        } finally {
            Redis.deleteAll(redisson, prefix);
            Redis.shutdown(redisson);
        }
    }
}
