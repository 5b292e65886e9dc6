package dev.fencing.redisson;

import dev.fencing.issuer.Lease;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.redisson.api.RedissonClient;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A token counter that went back (as after a FLUSHALL or a restart without append-only persistence;
 * here this test's own key is deleted on the shared Redis) under a running issuer. Also seen with a FLUSHALL on a
 * redis-server of its own (port 6391, appendonly yes): the same issuer handed out token 1 after 6.
 */
@Timeout(60)
class RedisCounterWentBackTest {

    private static final Duration T = Duration.ofSeconds(5);

    @Test
    void flushedCounterLetsAnUnpresentedZombieWriteAfterTheNewHolder() throws Throwable {
        RedissonClient redisson = Redis.client(30_000);
        String prefix = "mono-" + java.util.UUID.randomUUID() + ":lock:";
        try (RedissonTokenIssuer issuer = RedissonTokenIssuer.builder(redisson).prefix(prefix)
                .persistenceCheck(RedissonTokenIssuer.PersistenceCheck.WARN).build()) {
            InMemoryFenceStore store = new InMemoryFenceStore();
            String r = "mono:quiet:1";
            long last = 0;
            for (int i = 0; i < 5; i++) {
                try (Lease l = issuer.acquire(r, T)) {
                    last = l.token().value();
                }
            }
            Lease z = issuer.acquire(r, T); // the zombie: paused before its first write, lease lost
            FencingToken zombie = z.token();
            z.close();
            // the counter gone (a FLUSHALL, a restart without append-only persistence, a failover to an empty replica)
            redisson.getKeys().delete(RedisKeys.tokenKey(RedisKeys.lockKey(prefix, r)));
            FencingToken newer;
            try (Lease b = issuer.acquire(r, T)) {
                newer = b.token();
            } catch (RuntimeException refused) {
                assertThat(refused).hasMessageContaining("went back"); // fail closed
                return;
            }
            store.fence(r, newer, () -> null); // the new holder writes (the resource had no max_seen)
            assertThatThrownBy(() -> store.fence(r, zombie, () -> null))
                    .as("zombie %s writing after new holder %s", zombie, newer).isNotNull();
        } finally {
            redisson.getKeys().deleteByPattern(prefix + "*");
            redisson.getKeys().deleteByPattern("*{" + prefix + "*");
            Redis.shutdown(redisson);
        }
    }
}
