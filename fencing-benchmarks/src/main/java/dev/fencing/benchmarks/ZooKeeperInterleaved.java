package dev.fencing.benchmarks;

import dev.fencing.issuer.Lease;
import dev.fencing.zookeeper.ZooKeeperTokenIssuer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * {@link ZooKeeperIssuerBenchmark}'s comparison, the ZooKeeper issuer's acquire + release against raw Curator
 * {@link InterProcessMutex}'s on one in-process server and client, measured so that a slow window of a loaded host
 * falls on both alike: blocks of 25 of each, alternated in a rotating order, and each turn's ratio taken between its
 * own blocks (as {@link InterleavedCalls} does for the per-call path). Prints the medians and quartiles over the turns.
 *
 * <p>{@code java -cp fencing-benchmarks/target/benchmarks.jar dev.fencing.benchmarks.ZooKeeperInterleaved [seconds]}
 */
public final class ZooKeeperInterleaved {

    private static final int PER_BLOCK = 25;
    private static final int WARM_UP_TURNS = 5;

    private ZooKeeperInterleaved() {
    }

    public static void main(String[] args) throws Exception {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 30;
        try (TestingServer server = new TestingServer(true);
             CuratorFramework client = CuratorFrameworkFactory.newClient(server.getConnectString(),
                     new ExponentialBackoffRetry(100, 3))) {
            client.start();
            client.blockUntilConnected();
            try (ZooKeeperTokenIssuer issuer = new ZooKeeperTokenIssuer(client, "/bench/issuer", null)) {
                InterProcessMutex raw = new InterProcessMutex(client, "/bench/raw/resource");
                List<Double> ratios = new ArrayList<>();
                List<Double> rawMicros = new ArrayList<>();
                List<Double> issuerMicros = new ArrayList<>();
                long end = System.nanoTime() + seconds * 1_000_000_000L;
                for (int turn = 0; System.nanoTime() - end < 0; turn++) {
                    long rawNanos = 0;
                    long issuerNanos = 0;
                    for (int pair = 0; pair < 2; pair++) {
                        boolean rawFirst = ((turn + pair) & 1) == 0;
                        for (int pass = 0; pass < 2; pass++) {
                            boolean ofRaw = (pass == 0) == rawFirst;
                            long start = System.nanoTime();
                            for (int n = 0; n < PER_BLOCK; n++) {
                                if (ofRaw) {
                                    raw.acquire();
                                    raw.release();
                                } else {
                                    Lease lease = issuer.acquire("resource", Duration.ofSeconds(10));
                                    lease.close();
                                }
                            }
                            long took = System.nanoTime() - start;
                            if (ofRaw) {
                                rawNanos += took;
                            } else {
                                issuerNanos += took;
                            }
                        }
                    }
                    if (turn >= WARM_UP_TURNS) {
                        ratios.add((double) issuerNanos / rawNanos);
                        rawMicros.add(rawNanos / (2_000.0 * PER_BLOCK));
                        issuerMicros.add(issuerNanos / (2_000.0 * PER_BLOCK));
                    }
                }
                System.out.printf(Locale.ROOT, "turns %d%nraw mutex acquire + release, us   %s%n"
                                + "issuer acquire + release, us      %s%nissuer / raw mutex                %s%n",
                        ratios.size(), quartiles(rawMicros, "%.0f"), quartiles(issuerMicros, "%.0f"),
                        quartiles(ratios, "%.3f"));
            }
        }
    }

    private static String quartiles(List<Double> values, String format) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int n = sorted.size();
        return String.format(Locale.ROOT, "median " + format + "  q1 " + format + "  q3 " + format,
                sorted.get(n / 2), sorted.get(n / 4), sorted.get(3 * n / 4));
    }
}
