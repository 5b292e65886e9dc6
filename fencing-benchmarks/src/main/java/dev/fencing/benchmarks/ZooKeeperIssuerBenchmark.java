package dev.fencing.benchmarks;

import dev.fencing.issuer.Lease;
import dev.fencing.zookeeper.ZooKeeperTokenIssuer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Acquire + release of one uncontended lock: the ZooKeeper issuer (which also yields the czxid token) against raw
 * Curator {@link InterProcessMutex} on the same server and client, in one run. ZooKeeper runs in this JVM
 * (curator-test), on loopback.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 5)
@Measurement(iterations = 5, time = 10)
public class ZooKeeperIssuerBenchmark {

    private TestingServer server;
    private CuratorFramework client;
    private ZooKeeperTokenIssuer issuer;
    private InterProcessMutex raw;

    @Setup(Level.Trial)
    public void start() throws Exception {
        server = new TestingServer(true);
        client = CuratorFrameworkFactory.newClient(server.getConnectString(), new ExponentialBackoffRetry(100, 3));
        client.start();
        client.blockUntilConnected();
        issuer = new ZooKeeperTokenIssuer(client, "/bench/issuer", null);
        raw = new InterProcessMutex(client, "/bench/raw/resource");
    }

    @TearDown(Level.Trial)
    public void stop() throws Exception {
        issuer.close();
        client.close();
        server.close();
    }

    @Benchmark
    public void rawInterProcessMutex() throws Exception {
        raw.acquire(10, TimeUnit.SECONDS);
        raw.release();
    }

    @Benchmark
    public long zooKeeperTokenIssuer() {
        Lease lease = issuer.acquire("resource", Duration.ofSeconds(10));
        lease.close();
        return lease.token().value();
    }
}
