package dev.fencing.redisson;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.jdbc.JdbcFenceAdmin;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.recovery.FloorRaise;
import dev.fencing.recovery.FloorRaiseResult;
import dev.fencing.redisson.RedissonTokenIssuer.PersistenceCheck;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.postgresql.ds.PGSimpleDataSource;
import org.redisson.api.RedissonClient;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The zombie on Redisson with the JDBC store on PostgreSQL: a lease time is set, holder 1 pauses past it (its thread
 * blocks on a latch, in this JVM: Redis cannot tell that from a GC pause or a stopped process), holder 2 gets the
 * lock from Redis and writes, holder 1 wakes and writes with its old token. Without the fence the stale write lands;
 * with it PostgreSQL refuses it. Also the counter reset (a Redis restart without persistence, here one deleted token
 * key): the fence refuses the low tokens, and {@code raiseTokenFloor} is the way back.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedissonZombieTest {

    private static final Duration LEASE = Duration.ofMillis(500);

    private final String prefix = Redis.prefix("zombie");
    private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private final String notes = "redisson_notes_" + suffix;
    private final String fenceTable = "redisson_fence_" + suffix;
    private RedissonClient client1;
    private RedissonClient client2;
    private RedissonTokenIssuer holder1;
    private RedissonTokenIssuer holder2;
    private JdbcTemplate jdbc;
    private JdbcFenceStore store;

    @BeforeAll
    void start() {
        client1 = Redis.client(30_000);
        client2 = Redis.client(30_000);
        holder1 = issuer(client1);
        holder2 = issuer(client2);
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl("jdbc:postgresql://127.0.0.1:5432/test");
        dataSource.setUser("postgres");
        jdbc = new JdbcTemplate(dataSource);
        jdbc.execute("CREATE TABLE " + notes + " (k VARCHAR(300) PRIMARY KEY, v VARCHAR(20))");
        store = JdbcFenceStore.builder(dataSource).table(fenceTable).createTableIfMissing(true).build();
        store.verify();
    }

    private RedissonTokenIssuer issuer(RedissonClient client) {
        return RedissonTokenIssuer.builder(client).prefix(prefix).leaseTime(LEASE)
                .persistenceCheck(PersistenceCheck.WARN).build();
    }

    @AfterAll
    void stop() {
        if (jdbc != null) {
            jdbc.execute("DROP TABLE IF EXISTS " + notes);
            jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
        }
        holder1.close();
        holder2.close();
        Redis.deleteAll(client1, prefix);
        Redis.shutdown(client1);
        Redis.shutdown(client2);
    }

    @Test
    @Timeout(30)
    void withoutTheFenceThePausedHoldersStaleWriteLands() throws Throwable {
        Race race = race(false);
        assertThat(race.token2).isGreaterThan(race.token1);
        assertThat(race.zombieFailure).isNull();
        assertThat(read(race.resource)).as("holder 2's write is lost").isEqualTo("Y");
    }

    @Test
    @Timeout(30)
    void withTheFenceThePausedHoldersStaleWriteIsRefused() throws Throwable {
        Race race = race(true);
        assertThat(race.token2).isGreaterThan(race.token1);
        assertThat(race.zombieFailure).isInstanceOf(StaleTokenException.class);
        assertThat(((StaleTokenException) race.zombieFailure).maxSeen()).isEqualTo(race.token2);
        assertThat(read(race.resource)).as("holder 2's write stands").isEqualTo("X");
    }

    private record Race(String resource, long token1, long token2, Throwable zombieFailure) {
    }

    private Race race(boolean fenced) throws Throwable {
        String resource = "accounts:" + UUID.randomUUID();
        CountDownLatch acquired = new CountDownLatch(1);
        CountDownLatch wake = new CountDownLatch(1);
        long[] token1 = new long[1];
        CompletableFuture<Throwable> zombie = CompletableFuture.supplyAsync(() -> {
            Lease lease = holder1.acquire(resource, Duration.ofSeconds(5));
            try {
                token1[0] = lease.token().value();
                acquired.countDown();
                if (!wake.await(20, TimeUnit.SECONDS)) { // the pause, past the lease time
                    throw new IllegalStateException("never woken");
                }
                assertThat(lease.isLost()).as("the paused holder's lease time ran out").isTrue();
                write(lease.token(), "Y", fenced);
                return null;
            } catch (Throwable t) {
                return t;
            } finally {
                lease.close(); // quiet: the lock went with the lease time
            }
        });
        assertThat(acquired.await(10, TimeUnit.SECONDS)).isTrue();
        long token2;
        try (Lease next = holder2.acquire(resource, Duration.ofSeconds(10))) { // once Redis expired lock 1
            token2 = next.token().value();
            write(next.token(), "X", fenced);
        }
        wake.countDown();
        Throwable zombieFailure = zombie.get(20, TimeUnit.SECONDS);
        if (zombieFailure instanceof AssertionError e) {
            throw e;
        }
        return new Race(resource, token1[0], token2, zombieFailure);
    }

    @Test
    @Timeout(30)
    void aResetCounterIsRefusedByTheStoreUntilRaisedAboveMaxSeen() throws Throwable {
        String resource = "ledger:" + UUID.randomUUID();
        long last = 0;
        for (int i = 0; i < 3; i++) {
            try (Lease lease = holder1.acquire(resource, Duration.ofSeconds(5))) {
                write(lease.token(), "v" + i, true);
                last = lease.token().value();
            }
        }
        // what a Redis restart without persistence does to every counter (here to this one key only)
        client1.getKeys().delete(RedisKeys.tokenKey(RedisKeys.lockKey(prefix, resource)));
        // the issuer that handed out 3 refuses to hand out 1 now (it remembers its recent resources' tokens)
        assertThatThrownBy(() -> holder1.acquire(resource, Duration.ofSeconds(5)))
                .isInstanceOf(LockAcquisitionException.class).hasMessageContaining("went back");
        // another process's issuer, which never locked it, cannot tell: the store refuses its token
        try (Lease reset = holder2.acquire(resource, Duration.ofSeconds(5))) {
            assertThat(reset.token().value()).isEqualTo(2); // 1 went to holder1's refused acquire
            assertThatThrownBy(() -> write(reset.token(), "lost", true)) // fail closed: refused, not accepted
                    .isInstanceOf(StaleTokenException.class);
        }
        long maxSeen = new JdbcFenceAdmin(store).maxSeen(resource).orElseThrow();
        assertThat(maxSeen).isEqualTo(last);
        assertThat(holder1.raiseTokenFloor(resource, maxSeen)).isEqualTo(maxSeen);
        assertThat(holder1.raiseTokenFloor(resource, 1)).as("never lowered").isEqualTo(maxSeen);
        try (Lease repaired = holder1.acquire(resource, Duration.ofSeconds(5))) {
            assertThat(repaired.token().value()).isEqualTo(maxSeen + 1);
            write(repaired.token(), "back", true);
        }
        assertThat(read(resource)).isEqualTo("back");
    }

    /**
     * The same reset repaired for every resource of the store at once: a floor raise with a value (the actuator's
     * {@code afterRestore} with {@code atLeast}, the CLI's {@code --at-least}) raises each reset counter before the
     * store's max_seen, so the next token of every resource is accepted. Before, the floor raise raised only the
     * store, and every acquisition stayed refused until its counter crept past the new floor.
     */
    @Test
    @Timeout(30)
    void aFloorRaiseWithAValueRepairsEveryResetCounter() throws Throwable {
        String a = "ledger:" + UUID.randomUUID();
        String b = "ledger:" + UUID.randomUUID();
        for (String resource : List.of(a, b, a, a)) {
            try (Lease lease = holder1.acquire(resource, Duration.ofSeconds(5))) {
                write(lease.token(), "v", true);
            }
        }
        for (String resource : List.of(a, b)) { // a Redis restart without persistence
            client1.getKeys().delete(RedisKeys.tokenKey(RedisKeys.lockKey(prefix, resource)));
        }
        JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
        long highest = admin.highestMaxSeen().orElseThrow();

        FloorRaiseResult result = new FloorRaise(admin, admin, holder1, new AdminMetrics(new SimpleMeterRegistry()))
                .raiseAll(highest, "ops");

        assertThat(result.raised()).as("a and b (and the other tests' resources) below the value").isGreaterThan(0);
        for (String resource : List.of(a, b)) {
            try (Lease repaired = holder1.acquire(resource, Duration.ofSeconds(5))) {
                assertThat(repaired.token().value()).as(resource).isEqualTo(highest + 1);
                write(repaired.token(), "back", true);
            }
            assertThat(read(resource)).isEqualTo("back");
        }
    }

    private void write(FencingToken token, String value, boolean fenced) throws Throwable {
        if (!fenced) {
            put(token.resource(), value);
            return;
        }
        store.fence(token.resource(), token, () -> {
            put(token.resource(), value);
            return null;
        });
    }

    private void put(String key, String value) {
        jdbc.update("DELETE FROM " + notes + " WHERE k = ?", key);
        jdbc.update("INSERT INTO " + notes + " (k, v) VALUES (?, ?)", key, value);
    }

    private String read(String key) {
        return jdbc.query("SELECT v FROM " + notes + " WHERE k = ?", rs -> rs.next() ? rs.getString(1) : null, key);
    }
}
