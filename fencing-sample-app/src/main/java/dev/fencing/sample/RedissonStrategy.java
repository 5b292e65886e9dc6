package dev.fencing.sample;

import dev.fencing.issuer.Lease;
import dev.fencing.redisson.RedissonTokenIssuer;
import dev.fencing.redisson.RedissonTokenIssuer.PersistenceCheck;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Redisson's {@code RFencedLock} with a lease time: it does hand out a monotonic token, but Redisson leaves
 * checking it to the developer. Unchecked, the zombie's write lands as with any lock; checked by the database fence
 * ({@code fencing-redisson}'s issuer and the JDBC store), it is refused. Client 1's lock really expires in Redis after
 * the lease time; client 2's acquire is granted only then.
 */
final class RedissonStrategy implements Strategy {

    private final boolean fenced;

    RedissonStrategy(boolean fenced) {
        this.fenced = fenced;
    }

    @Override
    public String name() {
        return fenced ? "redisson+fence" : "redisson";
    }

    private String strategy() {
        return fenced ? "Redisson RFencedLock + fence" : "Redisson RFencedLock, token unchecked";
    }

    @Override
    public Row run(SampleDatabase db, Options options, Progress progress) throws Throwable {
        String address = options.redis() != null ? options.redis() : "127.0.0.1:6379";
        RedissonClient c1;
        RedissonClient c2;
        try {
            c1 = client(address);
        } catch (RuntimeException unreachable) {
            return Row.skipped(strategy(), fenced, "no Redis at " + address + " (" + unreachable.getMessage() + ")");
        }
        c2 = client(address);
        // a key prefix of this run only; the sample deletes its keys afterwards (a real application never deletes
        // Redisson's token keys: that restarts the counter)
        String prefix = "fencing-sample:" + UUID.randomUUID() + ":";
        try (RedissonTokenIssuer issuer1 = issuer(c1, prefix, options);
             RedissonTokenIssuer issuer2 = issuer(c2, prefix, options)) {
            String resource = "redisson-accounts:42";
            String pauseText = "it pauses past its " + options.lease().toMillis() + " ms lease time";
            if (fenced) {
                return IssuerRace.run(strategy(), name(), db, issuer1, issuer2, resource, () -> { },
                        pauseText, progress);
            }
            return unchecked(db, issuer1, issuer2, resource, pauseText, progress);
        } finally {
            c1.getKeys().deleteByPattern(prefix + "*");
            c1.getKeys().deleteByPattern("redisson_lock_token:{" + prefix + "*");
            c1.shutdown(0, 2, TimeUnit.SECONDS);
            c2.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }

    /** The race with the token in hand but nobody checking it: both writes trust their caller. */
    private Row unchecked(SampleDatabase db, RedissonTokenIssuer issuer1, RedissonTokenIssuer issuer2, String resource,
                          String pauseText, Progress progress) {
        Lease client1 = issuer1.acquire(resource, Duration.ofSeconds(10));
        long t1 = client1.token().value();
        progress.say(name(), "client 1 acquired token " + t1 + "; " + pauseText + " ...");
        long t2;
        try (Lease client2 = issuer2.acquire(resource, Duration.ofSeconds(60))) { // granted once lock 1 expired
            t2 = client2.token().value();
            progress.say(name(), "client 2 acquired token " + t2 + " and writes X");
            db.writeUnfenced(resource, "X");
        }
        progress.say(name(), "client 1 wakes and writes Y with " + t1 + ": nobody compares it, ACCEPTED");
        db.writeUnfenced(resource, "Y");
        client1.close();
        String result = db.read(resource);
        return new Row(strategy(), false, t1 + ", " + t2, t2 > t1, !"Y".equals(result), result, null);
    }

    private static RedissonTokenIssuer issuer(RedissonClient client, String prefix, Options options) {
        return RedissonTokenIssuer.builder(client).prefix(prefix).leaseTime(options.lease())
                .persistenceCheck(PersistenceCheck.WARN) // a demo on a Redis that may run without persistence
                .build();
    }

    private static RedissonClient client(String address) {
        Config config = new Config();
        config.useSingleServer().setAddress("redis://" + address).setConnectTimeout(1000).setTimeout(3000)
                .setConnectionMinimumIdleSize(1).setSubscriptionConnectionMinimumIdleSize(1);
        return Redisson.create(config);
    }
}
