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

    /**
     * What the "went back" refusal really does (a red-team finding, S4: the Javadoc said every acquisition fails until
     * the counter is raised). Each refused acquire ran the locking script, which counts the counter up, so after
     * {@code issuedBefore - token} more refusals acquisitions succeed again by themselves, with tokens above all this
     * issuer handed out; tokens another process handed out (here: max_seen 8) are not known here, and the fence store
     * refuses the new tokens up to its max_seen (stale below it, duplicate at it: the holder differs).
     */
    @Test
    void refusedAcquisitionsCountTheCounterUpUntilItPassesWhatThisIssuerHandedOutAndTheFenceRefusesTheRest()
            throws Throwable {
        RedissonClient redisson = Redis.client(30_000);
        String prefix = Redis.prefix("went-back-heals");
        try (RedissonTokenIssuer issuer = RedissonTokenIssuer.builder(redisson).prefix(prefix)
                .persistenceCheck(RedissonTokenIssuer.PersistenceCheck.WARN).build()) {
            InMemoryFenceStore store = new InMemoryFenceStore();
            String r = "heals:1";
            for (int i = 1; i <= 5; i++) {
                issuer.acquire(r, T).close();
            }
            store.fence(r, new FencingToken(r, 8, "another-process:1"), () -> null); // max_seen 8, not this issuer's
            redisson.getKeys().delete(RedisKeys.tokenKey(RedisKeys.lockKey(prefix, r))); // the counter is gone
            for (long token = 1; token <= 5; token++) {
                long expected = token;
                assertThatThrownBy(() -> issuer.acquire(r, T)).as("token %s", expected)
                        .hasMessageContaining("it handed out " + expected + ", yet this issuer handed out 5")
                        .hasMessageContaining("at most " + (5 - expected) + " more");
            }
            java.util.List<Class<?>> refusals = new java.util.ArrayList<>();
            for (long expected = 6; expected <= 9; expected++) {
                try (Lease lease = issuer.acquire(r, T)) { // handed out again, without a raise
                    assertThat(lease.token().value()).isEqualTo(expected);
                    store.fence(r, lease.token(), () -> null);
                    refusals.add(null);
                } catch (dev.fencing.rule.TokenRejectedException refused) {
                    refusals.add(refused.getClass());
                }
            }
            assertThat(refusals).containsExactly(dev.fencing.rule.StaleTokenException.class,
                    dev.fencing.rule.StaleTokenException.class, dev.fencing.rule.DuplicateTokenException.class, null);
        } finally {
            Redis.deleteAll(redisson, prefix);
            Redis.shutdown(redisson);
        }
    }
}
