package dev.fencing.verify.migration;

import dev.fencing.issuer.InMemoryIssuerBase;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.zookeeper.ZooKeeperTokenIssuer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fresh ZooKeeper ensemble (the old one's data lost or retired) restarts czxids low: moving from the old ensemble
 * to the new one through one {@link InMemoryFenceStore} (a database adds nothing to this question), the offset keeps
 * the switch safe with a client on each ensemble side by side; without it every resource refuses the new tokens.
 */
class ZooKeeperToNewEnsembleMigrationTest {

    private TestingServer oldEnsemble;
    private TestingServer newEnsemble;
    private CuratorFramework oldClient;
    private CuratorFramework newClient;
    private ZooKeeperTokenIssuer a;
    private ZooKeeperTokenIssuer b;
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final List<String> resources = List.of("ledger", "accounts:7");

    @BeforeEach
    void start() throws Exception {
        oldEnsemble = new TestingServer(true);
        newEnsemble = new TestingServer(true); // its own empty data directory
        oldClient = client(oldEnsemble);
        newClient = client(newEnsemble);
        a = new ZooKeeperTokenIssuer(oldClient, "/fencing", null);
        b = new ZooKeeperTokenIssuer(newClient, "/fencing", null);
        // the old ensemble has run for a while: its zxid is well above a fresh one's
        for (int i = 0; i < 60; i++) {
            try (Lease warm = a.acquire("warm-up", Duration.ofSeconds(10))) {
                assertThat(warm.token().value()).isPositive();
            }
        }
    }

    private static CuratorFramework client(TestingServer server) {
        CuratorFramework client = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryNTimes(3, 100));
        client.start();
        return client;
    }

    @AfterEach
    void stop() throws Exception {
        a.close();
        b.close();
        oldClient.close();
        newClient.close();
        oldEnsemble.close();
        newEnsemble.close();
    }

    @Test
    void withTheOffsetTheSwitchKeepsTheStoredOrderAndRefusesNothingOfB() throws Exception {
        Cutover cutover = new Cutover(store, resources);
        cutover.aloneOn("A", a, 10);
        long base = Math.max(store.highestMaxSeen().orElse(0), a.highestIssued("any")) + 1_000_000;
        TokenIssuer offset = OffsetTokenIssuer.establish(b, new InMemoryIssuerBase(), "new-ensemble", base, store);

        cutover.sideBySide(a, offset, 10, 20);

        cutover.assertSafeSwitch();
        assertThat(cutover.refusedOf("A")).as("the clients overlapped: A's late writes are refused as stale")
                .isNotEmpty().allMatch(Cutover.Refused::stale);
    }

    @Test
    void withoutTheOffsetTheNewEnsemblesTokensAreStale() throws Exception {
        Cutover cutover = new Cutover(store, resources);
        cutover.aloneOn("A", a, 10);
        assertThat(b.highestIssued("ledger")).isLessThan(store.highestMaxSeen().orElseThrow());

        cutover.sideBySide(a, b, 10, 5);

        assertThat(cutover.refusedOf("B")).isNotEmpty().anyMatch(Cutover.Refused::stale);
    }
}
