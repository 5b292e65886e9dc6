package dev.fencing.redisson;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.FencingConfigurationException;
import dev.fencing.redisson.RedissonTokenIssuer.PersistenceCheck;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
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

    private Process redis;
    private Path dir;
    private RedissonClient client;

    @BeforeAll
    void start() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        dir = Files.createTempDirectory("fencing-redis-eviction");
        redis = new ProcessBuilder("redis-server", "--port", String.valueOf(port), "--bind", "127.0.0.1",
                "--dir", dir.toString(), "--appendonly", "yes", "--appendfsync", "always", "--save", "",
                "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru")
                .redirectErrorStream(true).redirectOutput(dir.resolve("redis.log").toFile()).start();
        for (int attempt = 0; ; attempt++) {
            try (Socket probe = new Socket("127.0.0.1", port)) {
                break;
            } catch (java.io.IOException notYet) {
                if (attempt > 100) {
                    throw notYet;
                }
                Thread.sleep(100);
            }
        }
        Config config = new Config();
        config.useSingleServer().setAddress("redis://127.0.0.1:" + port).setConnectTimeout(2000).setTimeout(2000)
                .setConnectionMinimumIdleSize(1).setSubscriptionConnectionMinimumIdleSize(1);
        client = Redisson.create(config);
    }

    @AfterAll
    void stop() throws Exception {
        if (client != null) {
            Redis.shutdown(client);
        }
        redis.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
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
