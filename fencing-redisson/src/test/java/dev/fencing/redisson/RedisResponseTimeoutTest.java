package dev.fencing.redisson;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A Redis of its own whose writes are held up ({@code CLIENT PAUSE ... WRITE}) longer than Redisson's response
 * timeout: the acquire fails with Redisson's {@code RedisResponseTimeoutException}, and Redis runs the locking script
 * once the pause ends, so the lock is taken for an acquisition that had already failed. The issuer left it held until
 * its TTL (the watchdog timeout, 30 s by default: a probe saw the next acquirer time out), against issuers.md's "a
 * failed acquire never leaves a lock held"; it now unlocks the failed acquisition's owner, at once and again a few
 * seconds later.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(90)
class RedisResponseTimeoutTest {

    private OwnRedis redis;
    private RedissonClient client;

    @BeforeAll
    void start() throws Exception {
        redis = OwnRedis.start("response-timeout", "--save", "", "--appendonly", "no");
        Config config = new Config(); // the default watchdog timeout, 30 s: the TTL of a lock nobody releases
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

    @Test
    void anAcquireThatTimedOutWaitingForRedisLeavesNoLockHeldOnceRedisRunsIt() throws Exception {
        try (RedissonTokenIssuer issuer = RedissonTokenIssuer.builder(client).prefix("timeout:")
                .persistenceCheck(RedissonTokenIssuer.PersistenceCheck.WARN).build()) {
            String r = "paused:1";
            issuer.acquire(r, Duration.ofSeconds(5)).close(); // the script is loaded, the connections are up
            assertThat(redis.cli("client", "pause", "2500", "write")).isEqualTo("OK");
            long paused = System.nanoTime();
            assertThatThrownBy(() -> issuer.acquire(r, Duration.ofSeconds(10)))
                    .isInstanceOf(LockAcquisitionException.class).hasMessageContaining(r)
                    .hasMessageContaining("given back").hasStackTraceContaining("RedisResponseTimeoutException");
            // Redis runs the locking script when the pause ends (2.5 s); the lock must not stay for its 30 s TTL
            long left = Duration.ofMillis(3_000).toNanos() - (System.nanoTime() - paused);
            if (left > 0) {
                TimeUnit.NANOSECONDS.sleep(left); // past the pause, so that the next request is answered
            }
            try (Lease next = issuer.acquire(r, Duration.ofSeconds(12))) {
                assertThat(next.isLost()).isFalse();
            }
        }
    }
}
