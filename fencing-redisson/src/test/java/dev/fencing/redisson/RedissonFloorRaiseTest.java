package dev.fencing.redisson;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.recovery.FloorRaise;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.redisson.RedissonTokenIssuer.PersistenceCheck;
import dev.fencing.retention.CounterFloors;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.redisson.api.RedissonClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The floor raise after a restore (docs/operations.md, "Backup and restore", step 2 with
 * {@code atLeast}) gives every family it sees a floor at N, "so a key created after the backup is judged against
 * it". Redisson kept a counter per lock and no family floor: the raise lifted the counters of the keys it listed, but
 * a key of the family that Redisson never locked started at 1, below the family's floor, and every write of every new
 * entity was refused as stale until its own counter passed N (a red-team review). The issuer now keeps family floors.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class RedissonFloorRaiseTest {

    private final String prefix = Redis.prefix("floor-raise");
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
    void aNewKeyOfAFamilyTheFloorRaiseSawWritesWithRedissonsNextToken() throws Throwable {
        InMemoryFenceStore store = new InMemoryFenceStore();
        String family = "ledger-" + UUID.randomUUID();
        String existing = family + ":1";
        for (int i = 0; i < 3; i++) {
            try (Lease lease = redisson.acquire(existing, Duration.ofSeconds(5))) {
                store.fence(existing, lease.token(), () -> null);
            }
        }

        // the fence table was restored; the floor raise with a value (Redis restored too, or counters unsure)
        new FloorRaise(store, store, redisson, new AdminMetrics(new SimpleMeterRegistry()))
                .raiseAll(100, "ops:alice");

        try (Lease repaired = redisson.acquire(existing, Duration.ofSeconds(5))) {
            assertThat(repaired.token().value()).as("the listed key's counter was raised").isGreaterThan(100);
        }
        String created = family + ":2"; // a new entity, after the repair
        try (Lease lease = redisson.acquire(created, Duration.ofSeconds(5))) {
            FencingToken token = lease.token();
            assertThat(token.value()).isGreaterThan(100);
            assertThat(store.fence(created, token, () -> "written"))
                    .as("the first write of a new key of family %s with Redisson's token %s, family floor %s", family,
                            token.value(), store.familyFloor(family))
                    .isEqualTo("written");
        }
        // a key whose counter is below a floor raised later (compaction folds it, say) is raised past it too
        String low = family + ":3";
        try (Lease first = redisson.acquire(low, Duration.ofSeconds(5))) {
            assertThat(first.token().value()).isEqualTo(101);
        }
        redisson.raiseFamilyFloor(family, 500);
        redisson.raiseFamilyFloor(family, 200); // never lowered
        try (Lease next = redisson.acquire(low, Duration.ofSeconds(5))) {
            assertThat(next.token().value()).isEqualTo(501);
        }
        try (Lease unkeyed = redisson.acquire(family, Duration.ofSeconds(5))) {
            assertThat(unkeyed.token().value()).as("no family: no floor read").isEqualTo(1);
        }
    }

    /**
     * The repair of a Redis counter reset for a Redisson issuer under an offset (a migration to Redisson): the offset
     * kept {@code IssuedTokens} but dropped {@code CounterFloors}, so the raise lifted max_seen only and every next
     * token stayed refused (a red-team review).
     */
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

    /**
     * Redisson's locking script returns the counter it increments through a Lua number (a double): above 2^53 two
     * counters come back as one token (2^53 + 3 and 2^53 + 4 both as 2^53 + 4). A floor raised above 2^53 (tokens of
     * an issuer that counted in nanoseconds, before the move) was taken without a word, and the raise compared as
     * doubles too: the counter stayed at or below the floor, the next token equalled the store's max_seen, and
     * tokens repeated, each refused as "went back" blaming a FLUSHALL. Now the raise refuses such a floor, and a
     * counter above 2^53 - 1 (set by hand) is refused at acquire, naming both.
     */
    @Test
    void floorsAndCountersBeyondWhatRedissonReturnsExactlyAreRefusedNamingTheValue() {
        String resource = "precision:" + UUID.randomUUID();
        long floor = (1L << 53) + 3;
        assertThatThrownBy(() -> redisson.raiseTokenFloor(resource, floor))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(resource).hasMessageContaining(Long.toString(floor))
                .hasMessageContaining(Long.toString(RedissonTokenIssuer.MAX_TOKEN));
        assertThatThrownBy(() -> redisson.raiseFamilyFloor("precision", floor))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(Long.toString(floor));
        assertThat(redisson.raiseTokenFloor(resource, RedissonTokenIssuer.MAX_TOKEN - 1))
                .isEqualTo(RedissonTokenIssuer.MAX_TOKEN - 1);
        try (Lease last = redisson.acquire(resource, Duration.ofSeconds(5))) {
            assertThat(last.token().value()).isEqualTo(RedissonTokenIssuer.MAX_TOKEN);
        }
        assertThatThrownBy(() -> redisson.acquire(resource, Duration.ofSeconds(5)))
                .isInstanceOf(dev.fencing.issuer.LockAcquisitionException.class)
                .hasMessageContaining(resource).hasMessageContaining(Long.toString(1L << 53))
                .hasMessageContaining("Lua number");
        assertThat(redisson.isHeld(resource)).as("the lock was given back").isFalse();
    }
}
