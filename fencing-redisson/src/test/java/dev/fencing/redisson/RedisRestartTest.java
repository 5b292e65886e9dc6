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

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A real restart of a Redis of its own without persistence ({@code --save "" --appendonly no}, killed with SIGKILL
 * and started again on the same port) under a running issuer: the held lease is reported lost, and the next acquire
 * is refused: the restart emptied Redis, the issuer's data marker with it (RedisDataMarkerTest), until the instance is
 * restarted, after the counter is raised past what it handed out. (A red-team check; it held.)
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(90)
class RedisRestartTest {

    private OwnRedis redis;

    @BeforeAll
    void start() throws Exception {
        redis = OwnRedis.start("restart", "--save", "", "--appendonly", "no");
    }

    @AfterAll
    void stop() throws Exception {
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void aRestartWithoutPersistenceLosesTheHeldLeaseAndEveryTokenIsRefusedUntilTheInstanceRestarts() throws Exception {
        Config config = new Config();
        config.useSingleServer().setAddress(redis.address()).setConnectTimeout(1000).setTimeout(1000)
                .setConnectionMinimumIdleSize(1).setSubscriptionConnectionMinimumIdleSize(1);
        RedissonClient client = Redisson.create(config);
        try {
            try (RedissonTokenIssuer issuer = RedissonTokenIssuer.builder(client).prefix("restart:")
                    .lossCheckInterval(Duration.ofMillis(100))
                    .persistenceCheck(RedissonTokenIssuer.PersistenceCheck.WARN).build()) {
                String r = "restart:1";
                for (int i = 0; i < 4; i++) {
                    issuer.acquire(r, Duration.ofSeconds(5)).close();
                }
                Lease held = issuer.acquire(r, Duration.ofSeconds(5));
                assertThat(held.token().value()).isEqualTo(5);
                redis.kill();
                redis.restart();
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (!held.isLost() && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                assertThat(held.isLost()).as("the lease whose lock the restart wiped").isTrue();
                held.close();
                // the restart emptied Redis, the issuer's data marker with it (before the marker: refused as "went
                // back" for the resources this issuer locked before, and served again after a few refusals)
                assertThatThrownBy(() -> issuer.acquire(r, Duration.ofSeconds(5)))
                        .isInstanceOf(LockAcquisitionException.class).hasMessageContaining("lost data")
                        .hasMessageContaining("127.0.0.1:" + redis.port)
                        .hasMessageContaining("restart without persistence")
                        .hasMessageContaining("floor raise");
                assertThat(issuer.isHeld(r)).as("the refused lock was given back").isFalse();
                issuer.raiseTokenFloor(r, 5);
                assertThatThrownBy(() -> issuer.acquire(r, Duration.ofSeconds(5))).as("until this instance restarts")
                        .hasMessageContaining("lost data");
            }
            try (RedissonTokenIssuer restarted = RedissonTokenIssuer.builder(client).prefix("restart:")
                    .persistenceCheck(RedissonTokenIssuer.PersistenceCheck.WARN).build();
                 Lease next = restarted.acquire("restart:1", Duration.ofSeconds(5))) {
                assertThat(next.token().value()).isEqualTo(6);
            }
        } finally {
            Redis.shutdown(client);
        }
    }
}
