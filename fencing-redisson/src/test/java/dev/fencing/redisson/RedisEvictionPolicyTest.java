package dev.fencing.redisson;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.FencingConfigurationException;
import dev.fencing.redisson.RedissonTokenIssuer.PersistenceCheck;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * A Redis of its own, with append-only persistence on (the shared one runs without): an eviction policy that may
 * evict keys without a TTL ({@code allkeys-lru}, a common cache setting) evicts the token counters under memory
 * pressure, and their next tokens start again at 1. {@code build()} refuses it as it refuses {@code appendonly no};
 * a red-team review found it started without a word.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class RedisEvictionPolicyTest {

    private OwnRedis redis;
    private RedissonClient client;

    @BeforeAll
    void start() throws Exception {
        redis = OwnRedis.start("eviction", "--appendonly", "yes", "--appendfsync", "always", "--save", "",
                "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru");
        Config config = new Config();
        config.useSingleServer().setAddress(redis.address()).setConnectTimeout(2000).setTimeout(2000)
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
    void anEvictionPolicyThatMayEvictTheCountersIsRefusedUnlessWarned() {
        assertThatThrownBy(() -> RedissonTokenIssuer.builder(client).prefix(Redis.prefix("evict")).build().close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("maxmemory-policy is 'allkeys-lru'")
                .hasMessageContaining("noeviction").hasMessageContaining("PersistenceCheck.WARN");
        client.getRedisNodes(org.redisson.api.redisnode.RedisNodes.SINGLE).getInstance()
                .setConfig("maxmemory-policy", "volatile-lru");
        try {
            RedissonTokenIssuer.builder(client).prefix(Redis.prefix("evict")).build().close();
        } finally {
            client.getRedisNodes(org.redisson.api.redisnode.RedisNodes.SINGLE).getInstance()
                    .setConfig("maxmemory-policy", "allkeys-lru");
        }
        try (RedissonTokenIssuer warned = RedissonTokenIssuer.builder(client).prefix(Redis.prefix("evict"))
                .persistenceCheck(PersistenceCheck.WARN).build()) {
            assertThat(warned).isNotNull();
        }
    }
}
