package dev.fencing.verify.nemesis;

import dev.fencing.issuer.Lease;
import dev.fencing.verify.cluster.Issuers;
import dev.fencing.verify.cluster.ZooKeeperEnsemble;
import dev.fencing.verify.history.NemesisEvent;
import dev.fencing.zookeeper.ZooKeeperTokenIssuer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** restart-lock-service on a real 3-server ZooKeeper ensemble. */
@Timeout(240)
class RestartLockServiceNemesisTest {

    @Test
    void killsAMemberRestartsItOnItsDataAndTheEnsembleServesAfterwards() throws Exception {
        Path dir = Paths.get("target", "verify", "restart-nemesis-" + UUID.randomUUID().toString().substring(0, 8))
                .toAbsolutePath();
        ZooKeeperEnsemble zk = new ZooKeeperEnsemble(dir);
        List<NemesisEvent> events = new ArrayList<>();
        try (zk) {
            zk.start();
            RestartLockServiceNemesis nemesis = new RestartLockServiceNemesis(zk, Duration.ofMillis(500),
                    Duration.ofMillis(1_000));
            try (Issuers.Handle<ZooKeeperTokenIssuer> handle = Issuers.zookeeper(zk.clientAddress(),
                    Duration.ofSeconds(10))) {
                long before = token(handle.issuer());
                List<Long> pidsBefore = zk.members().stream().map(zk::pid).toList();
                // seeds whose first coin says leader (true) and follower (false): both kinds of member get hit
                for (boolean leaderFirst : new boolean[]{true, false}) {
                    Random random = seedWhoseFirstCoinIs(leaderFirst);
                    String leader = zk.leader();
                    int from = events.size();
                    nemesis.strike(new FakeTargets(), random, events::add);
                    String target = events.get(from).target();
                    if (leaderFirst) {
                        assertThat(target).as("aimed at the leader").isEqualTo(leader);
                    } else {
                        assertThat(target).as("aimed at a follower").isNotEqualTo(leader);
                    }
                    assertThat(zk.isRunning(target)).isTrue();
                    int index = zk.members().indexOf(target);
                    assertThat(zk.pid(target)).as("a new process").isNotEqualTo(pidsBefore.get(index));
                }
                assertThat(events).hasSize(4);
                assertThat(events).extracting(NemesisEvent::f).containsExactly("start", "stop", "start", "stop");
                assertThat(events).extracting(NemesisEvent::nemesis).containsOnly("restart-lock-service");
                assertThat(events).extracting(NemesisEvent::target).allMatch(t -> t.matches("zk-[123]"));
                assertThat(events.get(1).mono() - events.get(0).mono()).as("down at least 500 ms")
                        .isGreaterThanOrEqualTo(500_000_000L);
                assertThat(token(handle.issuer())).as("the ensemble serves, tokens still grow")
                        .isGreaterThan(before);
                assertThat(zk.members()).allMatch(zk::isRunning);
            }
        } finally {
            zk.close();
        }
        assertThat(zk.launchedPids()).hasSize(5).allMatch(pid -> ProcessHandle.of(pid).isEmpty()
                || !ProcessHandle.of(pid).get().isAlive());
        delete(dir);
    }

    @Test
    void refusesADownTimeThatEndsBeforeItStarts() {
        ZooKeeperEnsemble zk = new ZooKeeperEnsemble(Paths.get("target", "verify", "unused"));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new RestartLockServiceNemesis(zk,
                        Duration.ofSeconds(3), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("3000-1000 ms");
    }

    private static Random seedWhoseFirstCoinIs(boolean coin) {
        for (long seed = 0; ; seed++) {
            if (new Random(seed).nextBoolean() == coin) {
                return new Random(seed);
            }
        }
    }

    private static long token(ZooKeeperTokenIssuer issuer) {
        try (Lease lease = issuer.acquire("set", Duration.ofSeconds(30))) {
            return lease.token().value();
        }
    }

    private static void delete(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
