package dev.fencing.verify.cluster;

import dev.fencing.etcd.EtcdTokenIssuer;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.List;

import static dev.fencing.verify.cluster.LockServiceChecks.assertNothingLeft;
import static dev.fencing.verify.cluster.LockServiceChecks.awaitLeader;
import static dev.fencing.verify.cluster.LockServiceChecks.runDir;
import static dev.fencing.verify.cluster.LockServiceChecks.token;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EtcdClusterTest {

    @Test
    void tokensKeepGrowingAcrossAKilledLeaderAndItsRestartAndCloseLeavesNothing() throws Exception {
        EtcdCluster etcd = new EtcdCluster(runDir("etcd"));
        List<Integer> ports = etcd.ports();
        try (etcd) {
            etcd.start();
            assertThat(etcd.members()).containsExactly("etcd-1", "etcd-2", "etcd-3");
            assertThat(etcd.clientAddress()).matches("(http://127\\.0\\.0\\.1:\\d+,){2}http://127\\.0\\.0\\.1:\\d+");
            assertThat(ports).hasSize(6).doesNotHaveDuplicates();

            try (Issuers.Handle<EtcdTokenIssuer> handle = Issuers.etcd(etcd.clientAddress(), Duration.ofSeconds(5))) {
                long first = token(handle.issuer(), "set");
                String leader = awaitLeader(etcd, null);
                long leaderPid = etcd.pid(leader);

                etcd.kill(leader);
                assertThat(etcd.isRunning(leader)).isFalse();
                assertThat(ProcessHandle.of(leaderPid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
                String next = awaitLeader(etcd, leader);
                long afterKill = token(handle.issuer(), "set");
                assertThat(afterKill).isGreaterThan(first);

                etcd.restart(leader);
                assertThat(etcd.isRunning(leader)).isTrue();
                long afterRestart = token(handle.issuer(), "set");
                assertThat(afterRestart).isGreaterThan(afterKill);

                String follower = etcd.members().stream().filter(m -> !m.equals(next)).findFirst().orElseThrow();
                etcd.kill(follower);
                long afterFollowerKill = token(handle.issuer(), "set");
                assertThat(afterFollowerKill).isGreaterThan(afterRestart);
            }
        }
        assertThat(etcd.launchedPids()).hasSize(4);
        assertNothingLeft(etcd, etcd.launchedPids(), ports);
        etcd.close();
    }

    @Test
    void aMemberThatCannotStartFailsTheStartNamingItAndNothingIsLeft() throws Exception {
        EtcdCluster etcd = new EtcdCluster(runDir("etcd-partial"));
        List<Integer> ports = etcd.ports();
        int clientPort = URI.create(etcd.endpoint("etcd-2")).getPort();
        try (ServerSocket taken = new ServerSocket(clientPort, 1, InetAddress.getByName("127.0.0.1"))) {
            assertThatThrownBy(etcd::start).isInstanceOf(LockServiceException.class)
                    .hasMessageContaining("etcd-2 exited with code");
        }
        assertThat(etcd.launchedPids()).hasSize(3);
        assertNothingLeft(etcd, etcd.launchedPids(), ports);
        etcd.close();
    }
}
