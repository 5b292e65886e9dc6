package dev.fencing.etcd;

import dev.fencing.testsupport.Await;
import dev.fencing.testsupport.PartitionProxy;

import dev.fencing.issuer.Lease;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import io.etcd.jetcd.Client;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A holder cut off from etcd by the network (not by closing its client): no keep-alive reaches etcd within the
 * session lease's TTL, so etcd expires it and grants the lock to the next client, and the cut-off holder learns from
 * the silence that its lease is lost.
 */
class EtcdKeepAliveLossTest {

    private static final Duration TTL = Duration.ofSeconds(2);
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    @Timeout(120)
    void aLeaseWhoseKeepAlivesStopArrivingIsLostAndTakenOverWithALargerToken() throws Throwable {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        InMemoryFenceStore store = new InMemoryFenceStore();
        List<String> data = new ArrayList<>();
        try (EtcdCluster etcd = new EtcdCluster(1);
             PartitionProxy network = new PartitionProxy(etcd.members.get(0).clientPort);
             Client zombieClient = Client.builder().endpoints(network.endpoint())
                     .connectTimeout(Duration.ofSeconds(2)).build();
             Client otherClient = etcd.client()) {
            EtcdTokenIssuer zombieIssuer = new EtcdTokenIssuer(zombieClient, network.endpoint(), "/locks/",
                    TTL, registry);
            EtcdTokenIssuer otherIssuer = new EtcdTokenIssuer(otherClient, etcd.endpoints(), "/locks/", TTL, null);
            try {
                Lease zombie = zombieIssuer.acquire("accounts", WAIT);
                store.fence("accounts", zombie.token(), () -> data.add("zombie before the partition"));
                Thread.sleep(TTL.multipliedBy(2).toMillis());   // keep-alives hold the lease well past its TTL
                assertThat(zombie.isLost()).isFalse();

                network.partition();                            // keep-alives stop arriving; the client stays open
                long cut = System.nanoTime();
                Lease next = otherIssuer.acquire("accounts", WAIT); // granted once etcd expired the zombie's session
                long takenOverAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cut);
                assertThat(next.token().value()).isGreaterThan(zombie.token().value());
                assertThat(takenOverAfter).as("etcd waited for the TTL").isGreaterThanOrEqualTo(TTL.toMillis() / 2);

                // the zombie learns it from the silence alone; flagged first, counted right after on etcd's thread
                Await.until(() -> zombie.isLost() && registry.get("fencing.issuer.leases.lost").tag("issuer", "etcd")
                        .counter().count() >= 1);
                assertThat(registry.get("fencing.issuer.leases.lost").tag("issuer", "etcd").counter().count())
                        .isEqualTo(1);

                store.fence("accounts", next.token(), () -> data.add("X"));
                assertThatThrownBy(() -> store.fence("accounts", zombie.token(), () -> data.add("Y")))
                        .isInstanceOf(StaleTokenException.class);
                assertThat(data).containsExactly("zombie before the partition", "X");

                network.heal();
                assertThatCode(() -> zombie.close()).doesNotThrowAnyException();
                assertThat(registry.get("fencing.issuer.leases.lost").tag("issuer", "etcd").counter().count())
                        .isEqualTo(1);
                assertThat(next.isLost()).isFalse();
                assertThatThrownBy(() -> zombieIssuer.acquire("accounts", Duration.ofMillis(500)))
                        .as("the new holder still holds the lock");
                next.close();
                Lease again = zombieIssuer.acquire("accounts", WAIT); // the healed client starts a new session
                assertThat(again.token().value()).isGreaterThan(next.token().value());
                again.close();
            } finally {
                zombieIssuer.close();
                otherIssuer.close();
            }
        }
    }
}
