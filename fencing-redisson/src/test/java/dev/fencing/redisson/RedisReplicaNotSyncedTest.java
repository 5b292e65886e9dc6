package dev.fencing.redisson;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.testsupport.LogRecords;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A primary and a replica of their own (append-only persistence on both), the replica stopped ({@code SIGSTOP}):
 * Redisson runs the locking script on the primary and then waits for the replica ({@code checkLockSyncedSlaves}, on
 * by default), and fails the request with {@code NoSyncedSlavesException} after {@code slavesSyncTimeout} (1 s). The
 * script had run: the lock was held for the failed acquisition's owner, which nobody unlocked, so the resource stayed
 * locked for the lock's TTL (30 s with the watchdog) after every such failure. The issuer now gives it back.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class RedisReplicaNotSyncedTest {

    private OwnRedis primary;
    private OwnRedis replica;
    private RedissonClient client;

    @BeforeAll
    void start() throws Exception {
        primary = OwnRedis.start("primary", PERSISTENT);
        List<String> options = new ArrayList<>(List.of(PERSISTENT));
        options.addAll(List.of("--replicaof", "127.0.0.1", String.valueOf(primary.port)));
        replica = OwnRedis.start("replica", options.toArray(String[]::new));
        for (int i = 0; !replica.cli("role").contains("connected"); i++) {
            assertThat(i).as("the replica in sync within 20 s").isLessThan(200);
            Thread.sleep(100);
        }
        Config config = new Config();
        config.useMasterSlaveServers().setMasterAddress(primary.address())
                .addSlaveAddress(replica.address()).setTimeout(2000)
                .setMasterConnectionMinimumIdleSize(1).setSlaveConnectionMinimumIdleSize(1)
                .setSubscriptionConnectionMinimumIdleSize(1);
        client = Redisson.create(config);
    }

    /** Append-only persistence on both. */
    private static final String[] PERSISTENT = {"--save", "", "--appendonly", "yes", "--appendfsync", "always"};

    @AfterAll
    void stop() throws Exception {
        if (replica != null) {
            replica.signal("CONT");
        }
        if (client != null) {
            Redis.shutdown(client);
        }
        for (OwnRedis server : new OwnRedis[] {replica, primary}) {
            if (server != null) {
                server.close();
            }
        }
    }

    @Test
    void anAcquireFailedForAReplicaThatDidNotSyncLeavesNoLockHeld() throws Exception {
        try (RedissonTokenIssuer issuer = RedissonTokenIssuer.builder(client).prefix("replica:").build()) {
            String r = "not-synced:1";
            issuer.acquire(r, Duration.ofSeconds(5)).close();
            replica.signal("STOP");
            try {
                assertThatThrownBy(() -> issuer.acquire(r, Duration.ofSeconds(5)))
                        .isInstanceOf(LockAcquisitionException.class).hasMessageContaining(r)
                        .hasMessageContaining("given back").hasStackTraceContaining("NoSyncedSlavesException");
            } finally {
                replica.signal("CONT");
            }
            assertThat(primary.cli("wait", "1", "10000")).as("the replica caught up").isEqualTo("1");
            try (Lease next = issuer.acquire(r, Duration.ofSeconds(10))) { // not after the failed one's 30 s TTL
                assertThat(next.isLost()).isFalse();
            }
        }
    }

    /**
     * A replica without append-only persistence, which a failover may promote (a red-team finding: only the masters
     * were read): {@code build()} names it in a WARNING, and still builds (the replica keeps the counters in memory;
     * promoted, it is a master that the running issuer's periodic check reads).
     */
    @Test
    void aReplicaWithoutAppendOnlyIsNamedAtBuild() throws Exception {
        assertThat(replica.cli("config", "set", "appendonly", "no")).isEqualTo("OK");
        try (LogRecords log = LogRecords.of(RedissonTokenIssuer.class);
             RedissonTokenIssuer issuer = RedissonTokenIssuer.builder(client).prefix("replica-note:").build()) {
            assertThat(log.records()).filteredOn(r -> r.getMessage().contains("replica "))
                    .singleElement().satisfies(r -> assertThat(r.getMessage())
                            .contains("127.0.0.1:" + replica.port).contains("appendonly 'no'")
                            .contains("failover may promote it"));
        } finally {
            assertThat(replica.cli("config", "set", "appendonly", "yes")).isEqualTo("OK");
        }
    }
}
