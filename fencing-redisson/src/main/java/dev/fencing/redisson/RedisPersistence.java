package dev.fencing.redisson;

import org.redisson.RedissonShutdownException;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.client.RedisConnectionException;
import org.redisson.client.RedisNodeNotFoundException;
import org.redisson.client.RedisReconnectedException;
import org.redisson.client.RedisRedirectException;
import org.redisson.client.RedisRetryException;
import org.redisson.client.RedisTimeoutException;
import org.redisson.config.Config;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads whether the Redis masters keep the token counters across a restart: {@code appendonly yes} on every master
 * ({@code CONFIG GET appendonly}, {@code appendfsync}), and an eviction policy that cannot evict them
 * ({@code maxmemory-policy} not {@code allkeys-*}). Without either, a restart (or {@code FLUSHALL}), or memory
 * pressure, starts a counter again from 0. Read at startup and again periodically by a running issuer (a
 * {@code CONFIG SET} at runtime, a restart with another command line, a failover to another master); the replicas,
 * which a failover may promote, at startup only.
 */
final class RedisPersistence {

    private RedisPersistence() {
    }

    /**
     * What was found: problems that make the counters volatile; masters that could not be reached to ask
     * ({@code unreached}: a timeout, a broken connection); both empty when durable; and fsync notes.
     */
    record Finding(List<String> problems, List<String> unreached, List<String> notes) {
        boolean durable() {
            return problems.isEmpty() && unreached.isEmpty();
        }

        /** The problems and the unreached masters, for a message (unsure means not durable). */
        String describe() {
            List<String> all = new ArrayList<>(problems);
            all.addAll(unreached);
            return String.join("; ", all);
        }
    }

    /**
     * Asks every master. A master that answers with an error ({@code CONFIG} disabled or not allowed) is a problem; one
     * that could not be reached is listed apart, so that a running issuer keeps its verdict through an outage.
     */
    static Finding check(RedissonClient redisson) {
        List<String> problems = new ArrayList<>();
        List<String> unreached = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        List<? extends RedisNode> masters;
        try {
            masters = masters(redisson);
        } catch (RuntimeException e) {
            unreached.add("could not list the Redis masters to read their persistence settings: " + e);
            return new Finding(problems, unreached, notes);
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
            } catch (RedisTimeoutException | RedisConnectionException | RedisRetryException | RedisReconnectedException
                     | RedisNodeNotFoundException | RedisRedirectException | RedissonShutdownException e) {
                // transient: down, loading its data after a restart, busy, failing over, resharding
                unreached.add("could not reach " + where + " to read appendonly and maxmemory-policy: " + e);
            } catch (RuntimeException e) {
                problems.add("could not read appendonly and maxmemory-policy on " + where + " (CONFIG disabled or "
                        + "not allowed?): " + e);
            }
        }
        return new Finding(problems, unreached, notes);
    }

    /**
     * The replicas a failover may promote (master-slave, sentinel, cluster) without {@code appendonly yes} or with an
     * {@code allkeys-*} policy, or that could not be asked: notes, not problems. A replica keeps the counters in
     * memory while it runs (and a restarted one copies them from its master again); promoted, it is a master that the
     * running issuer's next check reads, and a restart of it then loses them.
     */
    static List<String> replicaNotes(RedissonClient redisson) {
        List<String> notes = new ArrayList<>();
        Collection<? extends RedisNode> replicas;
        try {
            replicas = replicas(redisson);
        } catch (RuntimeException e) {
            return List.of("could not list the Redis replicas to read their persistence settings: " + e);
        }
        for (RedisNode replica : replicas) {
            String where = String.valueOf(replica.getAddr());
            try {
                String appendOnly = replica.getConfig("appendonly").get("appendonly");
                String policy = replica.getConfig("maxmemory-policy").get("maxmemory-policy");
                boolean evicts = policy == null || policy.toLowerCase(java.util.Locale.ROOT).startsWith("allkeys-");
                if (!"yes".equalsIgnoreCase(appendOnly) || evicts) {
                    notes.add("replica " + where + " has appendonly '" + appendOnly + "' and maxmemory-policy '"
                            + policy + "': a failover may promote it, and once it is the master a restart or an "
                            + "eviction loses the counters (the running issuer's periodic check reads the new "
                            + "master); give it the masters' settings");
                }
            } catch (RuntimeException e) {
                notes.add("could not read the persistence settings of replica " + where + ": " + e);
            }
        }
        return notes;
    }

    private static Collection<? extends RedisNode> replicas(RedissonClient redisson) {
        Config config = redisson.getConfig();
        if (config.isClusterConfig()) {
            return redisson.getRedisNodes(RedisNodes.CLUSTER).getSlaves();
        }
        if (config.isSentinelConfig()) {
            return redisson.getRedisNodes(RedisNodes.SENTINEL_MASTER_SLAVE).getSlaves();
        }
        if (config.isSingleConfig()) {
            return List.of();
        }
        return redisson.getRedisNodes(RedisNodes.MASTER_SLAVE).getSlaves();
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
