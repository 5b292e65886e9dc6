package dev.fencing.zookeeper;

import dev.fencing.issuer.Lease;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/** Re-trial (retry2): concurrent acquires and recovery probes on one issuer never trip the went-back guard. */
@Timeout(120)
class ConcurrentAcquiresWentBackGuardTest {

    @Test
    void concurrentAcquiresAndProbesAreNotRefusedAsWentBack() throws Throwable {
        try (TestingServer server = new TestingServer(true);
             CuratorFramework client = Clients.start(server.getConnectString());
             ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(client, "/retry2", null)) {
            ExecutorService pool = Executors.newFixedThreadPool(8);
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            List<Future<?>> runs = new ArrayList<>();
            try {
                for (int t = 0; t < 8; t++) {
                    int n = t;
                    runs.add(pool.submit(() -> {
                        for (int i = 0; i < 25; i++) {
                            try {
                                if (n == 7) {
                                    issuer.highestIssued("retry2:hot");
                                } else {
                                    try (Lease l = issuer.acquire(n < 5 ? "retry2:hot" : "retry2:cold" + n,
                                            Duration.ofSeconds(30))) {
                                        l.token();
                                    }
                                }
                            } catch (Throwable e) {
                                failures.add(e);
                            }
                        }
                    }));
                }
                for (Future<?> run : runs) {
                    run.get();
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(failures).isEmpty();
        }
    }
}
