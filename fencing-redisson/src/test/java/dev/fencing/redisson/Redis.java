package dev.fencing.redisson;

import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.util.UUID;
import java.util.concurrent.TimeUnit;

/** Clients of the shared Redis on 127.0.0.1:6379; every test class works under a key prefix of its own. */
final class Redis {

    static final String ADDRESS = "redis://127.0.0.1:6379";

    private Redis() {
    }

    /** A client with Redisson's defaults, except the watchdog timeout. */
    static RedissonClient client(long watchdogMillis) {
        Config config = new Config();
        config.setLockWatchdogTimeout(watchdogMillis);
        config.useSingleServer().setAddress(ADDRESS).setConnectTimeout(2000).setTimeout(2000)
                .setConnectionMinimumIdleSize(2).setSubscriptionConnectionMinimumIdleSize(1);
        return Redisson.create(config);
    }

    /** A client for an address where nothing listens, created without connecting (lazy initialization). */
    static RedissonClient unreachable() {
        Config config = new Config();
        config.setLazyInitialization(true);
        config.useSingleServer().setAddress("redis://127.0.0.1:1").setConnectTimeout(500).setTimeout(500)
                .setRetryAttempts(1);
        return Redisson.create(config);
    }

    /** Shuts a client down without Redisson's default quiet period. */
    static void shutdown(RedissonClient client) {
        client.shutdown(0, 2, TimeUnit.SECONDS);
    }

    /** A key prefix no other run uses. */
    static String prefix(String test) {
        return "fencing-test:" + test + ":" + UUID.randomUUID() + ":";
    }

    /** Deletes every key of a run: its lock keys and Redisson's token keys for them. */
    static void deleteAll(RedissonClient client, String prefix) {
        client.getKeys().deleteByPattern(prefix + "*");
        client.getKeys().deleteByPattern(RedisKeys.TOKEN_PREFIX + ":{" + prefix + "*");
    }
}
