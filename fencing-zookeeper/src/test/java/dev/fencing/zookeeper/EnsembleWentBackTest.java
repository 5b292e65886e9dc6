package dev.fencing.zookeeper;

import dev.fencing.issuer.Lease;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.recovery.MaxSeenReset;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A ZooKeeper ensemble that lost its data (restarted on an empty data dir) starts its zxids low
 * again. Tokens must never go back, and the documented repair must not reopen a zombie window.
 */
@Timeout(120)
class EnsembleWentBackTest {

    private static final String RESOURCE = "mono:accounts:1";
    private static final Duration T = Duration.ofSeconds(10);

    /** A stale write after the documented reset (operations.md "The way back") of a data-lost ensemble. */
    @Test
    void resetAfterEnsembleWipeReadmitsZombie(@TempDir Path dir) throws Throwable {
        int port = InstanceSpec.getRandomPort();
        InMemoryFenceStore store = new InMemoryFenceStore();
        long zombie;
        FencingToken zombieToken;
        long lastWritten;
        try (TestingServer old = new TestingServer(port, dir.resolve("old").toFile(), true);
             CuratorFramework client = Clients.start(old.getConnectString());
             ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(client, "/mono", null)) {
            for (int i = 0; i < 50; i++) { // an ensemble that has lived a little: its zxid is above a fresh one's
                client.create().forPath("/mono-filler-" + i);
            }
            try (Lease a = issuer.acquire(RESOURCE, T)) {
                store.fence(RESOURCE, a.token(), () -> null);
            }
            try (Lease other = issuer.acquire("mono:accounts:2", T)) { // the store has other resources too
                store.fence("mono:accounts:2", other.token(), () -> null);
            }
            Lease z = issuer.acquire(RESOURCE, T); // the zombie: acquires, pauses before writing, lease lost
            zombieToken = z.token();
            zombie = zombieToken.value();
            z.close();
            try (Lease b = issuer.acquire(RESOURCE, T)) { // the next holder writes
                store.fence(RESOURCE, b.token(), () -> null);
                lastWritten = b.token().value();
            }
        }
        assertThat(lastWritten).isGreaterThan(zombie);
        // the ensemble lost its data: same address, empty data dir
        try (TestingServer fresh = new TestingServer(port, dir.resolve("fresh").toFile(), true);
             CuratorFramework client = Clients.start(fresh.getConnectString());
             ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(client, "/mono", null)) {
            try (Lease c = issuer.acquire(RESOURCE, T)) {
                assertThat(c.token().value()).isLessThan(zombie); // the sequence went back
                assertThatThrownBy(() -> store.fence(RESOURCE, c.token(), () -> null)); // fail closed: good
            }
            // the documented way back (operations.md: "a lock service lost its data (a fresh ZooKeeper ensemble
            // restarts czxids low) ... a reset undoes any of them")
            MaxSeenReset reset = new MaxSeenReset(store, issuer, new AdminMetrics(new SimpleMeterRegistry()));
            try {
                reset.toHighestIssued(RESOURCE, "ops:mono", false);
            } catch (RuntimeException refused) {
                return; // the reset refused: fail closed, what we want
            }
            try (Lease d = issuer.acquire(RESOURCE, T)) { // a new holder writes
                store.fence(RESOURCE, d.token(), () -> null);
            }
            // the zombie of the old ensemble wakes up and writes: after B's and D's writes, it must be refused
            assertThatThrownBy(() -> store.fence(RESOURCE, zombieToken, () -> null))
                    .as("zombie token %d of the old ensemble after the reset (max_seen was %d)", zombie, lastWritten)
                    .isNotNull();
        }
    }

    /** The same issuer, running through the wipe (Curator reconnects to the empty ensemble): must not go back. */
    @Test
    void runningIssuerGoesBackAfterWipe(@TempDir Path dir) throws Throwable {
        int port = InstanceSpec.getRandomPort();
        TestingServer old = new TestingServer(port, dir.resolve("old").toFile(), true);
        CuratorFramework client = Clients.start(old.getConnectString());
        try (ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(client, "/mono", null)) {
            for (int i = 0; i < 50; i++) {
                client.create().forPath("/mono-filler-" + i);
            }
            long before;
            try (Lease a = issuer.acquire(RESOURCE, T)) {
                before = a.token().value();
            }
            old.close();
            TestingServer fresh = new TestingServer(port, dir.resolve("fresh").toFile(), true);
            try {
                long after = -1;
                long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (after < 0 && System.nanoTime() < until) {
                    try (Lease b = issuer.acquire(RESOURCE, T)) {
                        after = b.token().value();
                    } catch (RuntimeException e) {
                        if (e.getMessage() != null && e.getMessage().contains("went back")) {
                            // refused, fail closed; and the issuer reports itself down (health) until a restart
                            assertThatThrownBy(issuer::probe).hasMessageContaining("went back");
                            return;
                        }
                        Thread.sleep(200);
                    }
                }
                assertThat(after).as("token from the same issuer after the ensemble lost its data")
                        .isGreaterThan(before);
            } finally {
                client.close();
                fresh.close();
            }
        }
    }

    /**
     * A process running through the wipe: its issuer hands out a token below one it issued before, a resource the old
     * holders never wrote accepts it, and the old ensemble's zombie then writes over it.
     */
    @Test
    void runningIssuerLetsOldZombieWriteAfterNewHolder(@TempDir Path dir) throws Throwable {
        int port = InstanceSpec.getRandomPort();
        InMemoryFenceStore store = new InMemoryFenceStore();
        String quiet = "mono:quiet:1"; // a resource whose holder of the old ensemble never wrote
        TestingServer old = new TestingServer(port, dir.resolve("old").toFile(), true);
        CuratorFramework client = Clients.start(old.getConnectString());
        try (ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(client, "/mono", null)) {
            for (int i = 0; i < 50; i++) {
                client.create().forPath("/mono-filler-" + i);
            }
            Lease z = issuer.acquire(quiet, T); // the zombie: in another process, paused before its write
            FencingToken zombieToken = z.token();
            z.close();
            old.close();
            TestingServer fresh = new TestingServer(port, dir.resolve("fresh").toFile(), true);
            try {
                FencingToken newer = null;
                long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (newer == null && System.nanoTime() < until) {
                    try (Lease b = issuer.acquire(quiet, T)) {
                        store.fence(quiet, b.token(), () -> null); // the new holder writes
                        newer = b.token();
                    } catch (RuntimeException e) {
                        if (e.getMessage() != null && e.getMessage().contains("went back")) {
                            return; // refused, fail closed
                        }
                        Thread.sleep(200);
                    }
                }
                FencingToken newHolder = newer;
                assertThat(newHolder).isNotNull();
                assertThatThrownBy(() -> store.fence(quiet, zombieToken, () -> null))
                        .as("zombie %s writing after the new holder %s", zombieToken, newHolder)
                        .isNotNull();
            } finally {
                client.close();
                fresh.close();
            }
        }
    }

    /** What holds: a restart on the same data dir keeps czxids growing, and the guard does not refuse it. */
    @Test
    void restartOnTheSameDataDirKeepsGrowing(@TempDir Path dir) throws Throwable {
        int port = InstanceSpec.getRandomPort();
        File data = dir.resolve("same").toFile();
        TestingServer server = new TestingServer(port, data, true);
        CuratorFramework client = Clients.start(server.getConnectString());
        try (ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(client, "/mono", null)) {
            long before;
            try (Lease a = issuer.acquire(RESOURCE, T)) {
                before = a.token().value();
            }
            server.stop();
            server.restart();
            long after = -1;
            long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (after < 0 && System.nanoTime() < until) {
                try (Lease b = issuer.acquire(RESOURCE, T)) {
                    after = b.token().value();
                } catch (RuntimeException e) {
                    assertThat(e.getMessage()).doesNotContain("went back");
                    Thread.sleep(200);
                }
            }
            assertThat(after).isGreaterThan(before);
            assertThat(issuer.highestIssued(RESOURCE)).isGreaterThan(after);
        } finally {
            client.close();
            server.close();
        }
    }
}
