package dev.fencing.redisson;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.recovery.FloorRaise;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.redisson.RedissonTokenIssuer.PersistenceCheck;
import dev.fencing.retention.CounterFloors;
import dev.fencing.store.InMemoryFenceStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.redisson.api.RedissonClient;

import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The repair of a Redis counter reset ({@code FloorRaise} with a value raises each resource's counter to it) for a
 * Redisson issuer under an offset (a migration to Redisson): the offset kept {@code IssuedTokens} but dropped
 * {@code CounterFloors}, so the raise lifted max_seen only and every next token stayed refused (a red-team review).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class RedissonOffsetFloorRaiseTest {

    private final String prefix = Redis.prefix("offset-floor-raise");
    private RedissonClient client;
    private RedissonTokenIssuer redisson;

    @BeforeAll
    void start() {
        client = Redis.client(30_000);
        redisson = RedissonTokenIssuer.builder(client).prefix(prefix).persistenceCheck(PersistenceCheck.WARN).build();
    }

    @AfterAll
    void stop() {
        redisson.close();
        Redis.deleteAll(client, prefix);
        Redis.shutdown(client);
    }

    @Test
    void anOffsetRedissonIssuerKeepsItsCounterFloorsSoAFloorRaiseRepairsAResetCounter() throws Throwable {
        OffsetTokenIssuer offset = OffsetTokenIssuer.of(redisson, 1_000_000);
        InMemoryFenceStore store = new InMemoryFenceStore();
        String resource = "ledger:" + UUID.randomUUID();
        for (int i = 0; i < 3; i++) {
            try (Lease lease = offset.acquire(resource, Duration.ofSeconds(5))) {
                store.fence(resource, lease.token(), () -> null);
            }
        }
        // what a Redis restart without persistence does to every counter (here to this one key only)
        client.getKeys().delete(RedisKeys.tokenKey(RedisKeys.lockKey(prefix, resource)));
        long highest = store.highestMaxSeen().orElseThrow();

        new FloorRaise(store, store, (IssuedTokens) offset, new AdminMetrics(new SimpleMeterRegistry()))
                .raiseAll(highest, "offset-floor-raise-test");

        try (Lease repaired = offset.acquire(resource, Duration.ofSeconds(5))) {
            assertThat(repaired.token().value()).as("the next token after the repair, max_seen was %s", highest)
                    .isGreaterThan(highest);
            assertThat(offset).as("the decorated issuer's counter floors stay offered")
                    .isInstanceOf(CounterFloors.class);
        }
    }
}
