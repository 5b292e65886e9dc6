package dev.fencing.verify.cluster;

import dev.fencing.zookeeper.ZooKeeperTokenIssuer;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;

import static dev.fencing.verify.cluster.LockServiceChecks.assertNothingLeft;
import static dev.fencing.verify.cluster.LockServiceChecks.awaitLeader;
import static dev.fencing.verify.cluster.LockServiceChecks.runDir;
import static dev.fencing.verify.cluster.LockServiceChecks.token;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ZooKeeperEnsembleTest {

    @Test
    void tokensKeepGrowingAcrossAKilledLeaderAndItsRestartAndCloseLeavesNothing() throws Exception {
        ZooKeeperEnsemble zk = new ZooKeeperEnsemble(runDir("zk"));
        List<Integer> ports = zk.ports();
        try (zk) {
            zk.start();
            assertThat(zk.members()).containsExactly("zk-1", "zk-2", "zk-3");
            assertThat(zk.clientAddress()).matches("127\\.0\\.0\\.1:\\d+,127\\.0\\.0\\.1:\\d+,127\\.0\\.0\\.1:\\d+");
            assertThat(ports).hasSize(9).doesNotHaveDuplicates();
            assertThat(Files.readString(zk.directory().resolve("2").resolve("data").resolve("myid")).trim())
                    .isEqualTo("2");
            assertThat(ShutdownHooks.open()).contains(zk);

            try (Issuers.Handle<ZooKeeperTokenIssuer> handle = Issuers.zookeeper(zk.clientAddress(),
                    Duration.ofSeconds(10))) {
                long first = token(handle.issuer(), "set");
                String leader = awaitLeader(zk, null);
                long leaderPid = zk.pid(leader);

                zk.kill(leader);
                assertThat(zk.isRunning(leader)).isFalse();
                assertThat(ProcessHandle.of(leaderPid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
                String next = awaitLeader(zk, leader);
                long afterKill = token(handle.issuer(), "set");
                assertThat(afterKill).isGreaterThan(first);

                zk.restart(leader);
                assertThat(zk.isRunning(leader)).isTrue();
                assertThat(zk.pid(leader)).isNotEqualTo(leaderPid);
                long afterRestart = token(handle.issuer(), "set");
                assertThat(afterRestart).isGreaterThan(afterKill);

                String follower = zk.members().stream().filter(m -> !m.equals(next)).findFirst().orElseThrow();
                zk.kill(follower);
                long afterFollowerKill = token(handle.issuer(), "set");
                assertThat(afterFollowerKill).isGreaterThan(afterRestart);
            }
        }
        assertThat(zk.launchedPids()).hasSize(4); // 3 at start and the restarted leader
        assertNothingLeft(zk, zk.launchedPids(), ports);
        zk.close(); // again: nothing happens
    }

    @Test
    void aServerThatCannotStartFailsTheStartNamingItAndNothingIsLeft() throws Exception {
        ZooKeeperEnsemble zk = new ZooKeeperEnsemble(runDir("zk-partial"));
        List<Integer> ports = zk.ports();
        // zk-2's client port is taken: it exits at once, while zk-1 and zk-3 start
        try (ServerSocket taken = new ServerSocket(zk.clientPort("zk-2"), 1, InetAddress.getByName("127.0.0.1"))) {
            assertThatThrownBy(zk::start).isInstanceOf(LockServiceException.class)
                    .hasMessageContaining("zk-2 exited with code");
        }
        assertThat(zk.launchedPids()).hasSizeGreaterThanOrEqualTo(2);
        assertNothingLeft(zk, zk.launchedPids(), ports);
        zk.close();
        assertThatThrownBy(zk::start).isInstanceOf(IllegalStateException.class);
    }
}
