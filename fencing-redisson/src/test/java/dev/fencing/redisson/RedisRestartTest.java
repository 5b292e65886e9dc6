package dev.fencing.redisson;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
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
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A real restart of a Redis of its own without persistence ({@code --save "" --appendonly no}, killed with SIGKILL
 * and started again on the same port) under a running issuer: the held lease is reported lost, and the next acquire
 * of a resource the issuer locked before is refused as "went back", naming the resource, both values and the raise,
 * until the counter is raised past what it handed out. (A red-team check; it held.)
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(90)
class RedisRestartTest {

    private Process redis;
    private Path dir;
    private int port;

    @BeforeAll
    void start() throws Exception {
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        dir = Files.createTempDirectory("fencing-redis-restart");
        redis = startRedis();
    }

    private Process startRedis() throws Exception {
        Process started = new ProcessBuilder("redis-server", "--port", String.valueOf(port), "--bind", "127.0.0.1",
                "--dir", dir.toString(), "--save", "", "--appendonly", "no")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(
                        dir.resolve("redis.log").toFile())).start();
        for (int attempt = 0; ; attempt++) {
            try (Socket probe = new Socket("127.0.0.1", port)) {
                return started;
            } catch (java.io.IOException notYet) {
                if (attempt > 100) {
                    throw notYet;
                }
                Thread.sleep(100);
            }
        }
    }

    @AfterAll
    void stop() throws Exception {
        redis.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }

    @Test
    void aRestartWithoutPersistenceLosesTheHeldLeaseAndTheNextTokenIsRefusedAsWentBack() throws Exception {
        Config config = new Config();
        config.useSingleServer().setAddress("redis://127.0.0.1:" + port).setConnectTimeout(1000).setTimeout(1000)
                .setConnectionMinimumIdleSize(1).setSubscriptionConnectionMinimumIdleSize(1);
        RedissonClient client = Redisson.create(config);
        try (RedissonTokenIssuer issuer = RedissonTokenIssuer.builder(client).prefix("restart:")
                .lossCheckInterval(Duration.ofMillis(100))
                .persistenceCheck(RedissonTokenIssuer.PersistenceCheck.WARN).build()) {
            String r = "restart:1";
            for (int i = 0; i < 4; i++) {
                issuer.acquire(r, Duration.ofSeconds(5)).close();
            }
            Lease held = issuer.acquire(r, Duration.ofSeconds(5));
            assertThat(held.token().value()).isEqualTo(5);
            redis.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            redis = startRedis();
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (!held.isLost() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(held.isLost()).as("the lease whose lock the restart wiped").isTrue();
            held.close();
            assertThatThrownBy(() -> issuer.acquire(r, Duration.ofSeconds(5)))
                    .isInstanceOf(LockAcquisitionException.class).hasMessageContaining("went back")
                    .hasMessageContaining(r).hasMessageContaining("127.0.0.1:" + port)
                    .hasMessageContaining("raiseTokenFloor(resource, max(5, maxSeen))")
                    .hasMessageContaining("at most 4 more");
            assertThat(issuer.isHeld(r)).as("the refused lock was given back").isFalse();
            issuer.raiseTokenFloor(r, 5);
            try (Lease next = issuer.acquire(r, Duration.ofSeconds(5))) {
                assertThat(next.token().value()).isEqualTo(6);
            }
        } finally {
            Redis.shutdown(client);
        }
    }
}
