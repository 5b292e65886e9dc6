package dev.fencing.redisson;

import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.config.Config;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads, once at startup, whether the Redis masters keep the token counters across a restart: {@code appendonly yes}
 * on every master ({@code CONFIG GET appendonly}, {@code appendfsync}), and an eviction policy that cannot evict them
 * ({@code maxmemory-policy} not {@code allkeys-*}). Without either, a restart (or {@code FLUSHALL}), or memory
 * pressure, starts a counter again from 0.
 */
final class RedisPersistence {

    private RedisPersistence() {
    }

    /** What was found: problems that make the counters volatile (empty when durable), and fsync notes. */
    record Finding(List<String> problems, List<String> notes) {
        boolean durable() {
            return problems.isEmpty();
        }
    }

    /** Asks every master; a master that cannot be asked is a problem (unsure means not durable). */
    static Finding check(RedissonClient redisson) {
        List<String> problems = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        List<? extends RedisNode> masters;
        try {
            masters = masters(redisson);
        } catch (RuntimeException e) {
            problems.add("could not list the Redis masters to read their persistence settings: " + e);
            return new Finding(problems, notes);
        }
        for (RedisNode master : masters) {
            String where = String.valueOf(master.getAddr());
            try {
                // an allkeys-* policy evicts keys without a TTL, the counters among them, under memory pressure
                String policy = master.getConfig("maxmemory-policy").get("maxmemory-policy");
                if (policy == null || policy.toLowerCase(java.util.Locale.ROOT).startsWith("allkeys-")) {
                    problems.add("maxmemory-policy is '" + policy + "' on " + where + ", which may evict the "
                            + "counters (they have no TTL): keep noeviction or a volatile-* policy");
                }
                Map<String, String> aof = master.getConfig("appendonly");
                String appendOnly = aof.get("appendonly");
                if (!"yes".equalsIgnoreCase(appendOnly)) {
                    problems.add("appendonly is '" + appendOnly + "' on " + where);
                    continue;
                }
                String fsync = master.getConfig("appendfsync").get("appendfsync");
                if (!"always".equalsIgnoreCase(fsync)) {
                    notes.add("appendfsync is '" + fsync + "' on " + where + ": a crash loses up to the last second "
                            + "of increments (reissued tokens are refused as stale or duplicate until the counter "
                            + "passes max_seen)");
                }
            } catch (RuntimeException e) {
                problems.add("could not read appendonly and maxmemory-policy on " + where + " (CONFIG disabled or "
                        + "not allowed?): " + e);
            }
        }
        return new Finding(problems, notes);
    }

    private static List<? extends RedisNode> masters(RedissonClient redisson) {
        Config config = redisson.getConfig();
        if (config.isClusterConfig()) {
            return new ArrayList<>(redisson.getRedisNodes(RedisNodes.CLUSTER).getMasters());
        }
        if (config.isSentinelConfig()) {
            return List.of(redisson.getRedisNodes(RedisNodes.SENTINEL_MASTER_SLAVE).getMaster());
        }
        if (config.isSingleConfig()) {
            return List.of(redisson.getRedisNodes(RedisNodes.SINGLE).getInstance());
        }
        return List.of(redisson.getRedisNodes(RedisNodes.MASTER_SLAVE).getMaster());
    }

    private static final Pattern ADDRESS = Pattern.compile("rediss?://[^\\s\"',\\]]+");

    /**
     * The Redis addresses of the client's configuration, for messages ({@code redis://127.0.0.1:6379}); read once
     * from its YAML form (addresses only, never credentials).
     */
    static String describe(RedissonClient redisson) {
        try {
            Set<String> found = new LinkedHashSet<>();
            Matcher m = ADDRESS.matcher(redisson.getConfig().toYAML());
            while (m.find()) {
                found.add(m.group().replaceAll("//[^@/]*@", "//")); // no user:password@ in messages
            }
            if (!found.isEmpty()) {
                return String.join(",", found);
            }
        } catch (Exception | LinkageError ignored) {
            // only a description
        }
        return "Redis (Redisson client " + redisson.getId() + ")";
    }
}
