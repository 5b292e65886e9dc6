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

import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

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

    private final List<Process> servers = new ArrayList<>();
    private final List<Path> dirs = new ArrayList<>();
    private int primaryPort;
    private int replicaPort;
    private Process replica;
    private RedissonClient client;

    @BeforeAll
    void start() throws Exception {
        primaryPort = freePort();
        replicaPort = freePort();
        start(primaryPort);
        replica = start(replicaPort, "--replicaof", "127.0.0.1", String.valueOf(primaryPort));
        for (int i = 0; !cli(replicaPort, "role").contains("connected"); i++) {
            assertThat(i).as("the replica in sync within 20 s").isLessThan(200);
            Thread.sleep(100);
        }
        Config config = new Config();
        config.useMasterSlaveServers().setMasterAddress("redis://127.0.0.1:" + primaryPort)
                .addSlaveAddress("redis://127.0.0.1:" + replicaPort).setTimeout(2000)
                .setMasterConnectionMinimumIdleSize(1).setSlaveConnectionMinimumIdleSize(1)
                .setSubscriptionConnectionMinimumIdleSize(1);
        client = Redisson.create(config);
    }

    @AfterAll
    void stop() throws Exception {
        if (replica != null) {
            signal("CONT", replica);
        }
        if (client != null) {
            Redis.shutdown(client);
        }
        for (Process server : servers) {
            server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        for (Path dir : dirs) {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    @Test
    void anAcquireFailedForAReplicaThatDidNotSyncLeavesNoLockHeld() throws Exception {
        try (RedissonTokenIssuer issuer = RedissonTokenIssuer.builder(client).prefix("replica:").build()) {
            String r = "not-synced:1";
            issuer.acquire(r, Duration.ofSeconds(5)).close();
            signal("STOP", replica);
            try {
                assertThatThrownBy(() -> issuer.acquire(r, Duration.ofSeconds(5)))
                        .isInstanceOf(LockAcquisitionException.class).hasMessageContaining(r)
                        .hasMessageContaining("given back").hasStackTraceContaining("NoSyncedSlavesException");
            } finally {
                signal("CONT", replica);
            }
            assertThat(cli(primaryPort, "wait", "1", "10000")).as("the replica caught up").isEqualTo("1");
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
        assertThat(cli(replicaPort, "config", "set", "appendonly", "no")).isEqualTo("OK");
        try (LogRecords log = LogRecords.of(RedissonTokenIssuer.class);
             RedissonTokenIssuer issuer = RedissonTokenIssuer.builder(client).prefix("replica-note:").build()) {
            assertThat(log.records()).filteredOn(r -> r.getMessage().contains("replica "))
                    .singleElement().satisfies(r -> assertThat(r.getMessage())
                            .contains("127.0.0.1:" + replicaPort).contains("appendonly 'no'")
                            .contains("failover may promote it"));
        } finally {
            assertThat(cli(replicaPort, "config", "set", "appendonly", "yes")).isEqualTo("OK");
        }
    }

    private Process start(int port, String... extra) throws Exception {
        Path dir = Files.createTempDirectory("fencing-redis-replica");
        dirs.add(dir);
        List<String> command = new ArrayList<>(List.of("redis-server", "--port", String.valueOf(port), "--bind",
                "127.0.0.1", "--dir", dir.toString(), "--save", "", "--appendonly", "yes", "--appendfsync", "always"));
        command.addAll(List.of(extra));
        Process server = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile()).start();
        servers.add(server);
        for (int attempt = 0; ; attempt++) {
            try (Socket probe = new Socket("127.0.0.1", port)) {
                return server;
            } catch (java.io.IOException notYet) {
                if (attempt > 100) {
                    throw notYet;
                }
                Thread.sleep(100);
            }
        }
    }

    private static int freePort() throws Exception {
        try (ServerSocket free = new ServerSocket(0)) {
            return free.getLocalPort();
        }
    }

    private static String cli(int port, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("redis-cli", "-p", String.valueOf(port)));
        command.addAll(List.of(args));
        Process cli = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertThat(cli.waitFor(20, TimeUnit.SECONDS)).isTrue();
        return new String(cli.getInputStream().readAllBytes()).trim();
    }

    private static void signal(String signal, Process process) throws Exception {
        assertThat(new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).start()
                .waitFor(10, TimeUnit.SECONDS)).isTrue();
    }
}
