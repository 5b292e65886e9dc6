package dev.fencing.redisson;

import dev.fencing.issuer.Lease;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.redisson.Redisson;
import org.redisson.api.NameMapper;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A Redisson client with a {@code NameMapper} (here one that puts an application prefix before every name): Redisson
 * keeps the counter under the mapped lock name, <code>redisson_lock_token:{app:lockKey}</code>, while
 * {@code raiseTokenFloor} computed <code>redisson_lock_token:{lockKey}</code>, which the script mapped once more. The
 * raise answered the floor as the counter's value and changed nothing: the next token was 2, not 101, so a floor
 * raise after a Redis restart (which calls it for every resource) reported success and every write stayed refused
 * as stale. It is now refused, naming the mapping and the counter key.
 */
@Timeout(60)
class RedissonNameMapperTest {

    @Test
    void theCounterRaiseIsRefusedForAClientThatMapsNamesInsteadOfSettingAnotherKey() {
        String app = "fencing-test:mapped-" + UUID.randomUUID() + ":";
        Config config = new Config();
        config.useSingleServer().setAddress(Redis.ADDRESS).setConnectionMinimumIdleSize(1)
                .setSubscriptionConnectionMinimumIdleSize(1).setNameMapper(new NameMapper() {
                    @Override
                    public String map(String name) {
                        return app + name;
                    }

                    @Override
                    public String unmap(String name) {
                        return name.startsWith(app) ? name.substring(app.length()) : name;
                    }
                });
        RedissonClient client = Redisson.create(config);
        String prefix = "lock:";
        try (RedissonTokenIssuer issuer = RedissonTokenIssuer.builder(client).prefix(prefix)
                .persistenceCheck(RedissonTokenIssuer.PersistenceCheck.WARN).build()) {
            String r = "mapped:1";
            issuer.acquire(r, Duration.ofSeconds(5)).close();
            assertThatThrownBy(() -> issuer.raiseTokenFloor(r, 100)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining(r).hasMessageContaining("NameMapper")
                    .hasMessageContaining("redisson_lock_token:{" + app + prefix + r + "}");
            try (Lease next = issuer.acquire(r, Duration.ofSeconds(5))) {
                assertThat(next.token().value()).as("nothing was raised").isEqualTo(2);
            }
        } finally {
            Redis.shutdown(client);
            RedissonClient plain = Redis.client(30_000);
            try {
                plain.getKeys().deleteByPattern("*" + app + "*");
            } finally {
                Redis.shutdown(plain);
            }
        }
    }
}
