package dev.fencing.sample;

import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.SetParams;

import java.util.UUID;

/**
 * 2. The Redlock approach on one Redis node: {@code SET lock <random> NX PX <lease>}. The random value tells holders
 * apart but has no order, so the resource (here a Redis key) cannot tell the zombie from the new holder.
 */
final class RedisStrategy implements Strategy {

    @Override
    public String name() {
        return "redis";
    }

    @Override
    public Row run(SampleDatabase db, Options options, Progress progress) throws Exception {
        String address = options.redis() != null ? options.redis() : "127.0.0.1:6379";
        HostAndPort hostPort = HostAndPort.from(address);
        String prefix = "fencing-sample:" + UUID.randomUUID() + ":";
        String lock = prefix + "lock";
        String data = prefix + "data";
        DefaultJedisClientConfig config = DefaultJedisClientConfig.builder().connectionTimeoutMillis(1000)
                .socketTimeoutMillis(5000).build();
        try (Jedis client1 = new Jedis(hostPort, config); Jedis client2 = new Jedis(hostPort, config)) {
            try {
                client1.ping();
            } catch (RuntimeException unreachable) {
                return Row.skipped("Redis lock, random value", false, "no Redis at " + address + " ("
                        + unreachable.getMessage() + ")");
            }
            try {
                long leaseMs = options.lease().toMillis();
                String value1 = UUID.randomUUID().toString();
                String value2 = UUID.randomUUID().toString();
                if (!"OK".equals(client1.set(lock, value1, SetParams.setParams().nx().px(leaseMs)))) {
                    throw new IllegalStateException("client 1 could not take a fresh Redis lock");
                }
                progress.say(name(), "client 1 holds " + lock + " = " + value1.substring(0, 8) + "...; it pauses ...");
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (!"OK".equals(client2.set(lock, value2, SetParams.setParams().nx().px(leaseMs)))) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("Redis never released the lock");
                    }
                    Thread.sleep(20);
                }
                progress.say(name(), "key expired; client 2 holds it (" + value2.substring(0, 8) + "...) and writes X");
                client2.set(data, "X");
                progress.say(name(), "client 1 wakes and writes Y; its random value carries no order to compare");
                client1.set(data, "Y");
                String result = client2.get(data);
                return new Row("Redis lock, random value", false,
                        value1.substring(0, 8) + ".., " + value2.substring(0, 8) + "..",
                        false, !"Y".equals(result), result, null);
            } finally {
                client2.del(lock, data);
            }
        }
    }
}
