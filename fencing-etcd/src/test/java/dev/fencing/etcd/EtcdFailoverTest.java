package dev.fencing.etcd;

import dev.fencing.testsupport.Await;
import dev.fencing.issuer.Lease;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.etcd.jetcd.Client;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A three-member etcd cluster loses its leader and a holder loses its lease: tokens stay monotonic, the old holder is
 * fenced.
 */
class EtcdFailoverTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void killTheLeaderTokensStayMonotonicAndTheOldHolderIsFenced() throws Throwable {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        InMemoryFenceStore store = new InMemoryFenceStore();
        List<String> data = new ArrayList<>();
        try (EtcdCluster etcd = new EtcdCluster(3);
             Client zombieClient = etcd.client();
             Client otherClient = etcd.client()) {
            EtcdTokenIssuer zombieIssuer = new EtcdTokenIssuer(zombieClient, etcd.endpoints(), "/locks/",
                    Duration.ofSeconds(2), registry);
            EtcdTokenIssuer otherIssuer = new EtcdTokenIssuer(otherClient, etcd.endpoints(), "/locks/",
                    Duration.ofSeconds(2), null);

            Lease warmup = otherIssuer.acquire("accounts", WAIT);
            long before = warmup.token().value();
            warmup.close();

            Lease zombie = zombieIssuer.acquire("accounts", WAIT);
            FencingToken zombieToken = zombie.token();
            assertThat(zombieToken.value()).isGreaterThan(before);
            store.fence("accounts", zombieToken, () -> data.add("zombie before its pause"));

            EtcdCluster.Member leader = etcd.leader();
            leader.kill();                       // the cluster elects a new leader
            zombieClient.close();                // and the zombie stops talking to etcd: its session lease expires

            Lease next = otherIssuer.acquire("accounts", WAIT); // granted once the zombie's lease is gone
            assertThat(next.token().value()).isGreaterThan(zombieToken.value());
            // flagged first, counted right after, maybe on etcd's callback thread: wait for both
            Await.until(() -> zombie.isLost() && registry.get("fencing.issuer.leases.lost").tag("issuer", "etcd")
                    .counter().count() >= 1);
            assertThat(registry.get("fencing.issuer.leases.lost").tag("issuer", "etcd").counter().count()).isEqualTo(1);

            store.fence("accounts", next.token(), () -> data.add("X"));
            assertThatThrownBy(() -> store.fence("accounts", zombieToken, () -> data.add("Y")))
                    .isInstanceOf(StaleTokenException.class);
            assertThat(data).containsExactly("zombie before its pause", "X");

            zombie.close();       // clean, and the new holder keeps its lock
            assertThat(next.isLost()).isFalse();
            next.close();
            Lease after = otherIssuer.acquire("accounts", WAIT);
            assertThat(after.token().value()).isGreaterThan(next.token().value());
            after.close();
            otherIssuer.close();
        }
    }
}
