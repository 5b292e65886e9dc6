package dev.fencing.benchmarks;

import dev.fencing.etcd.EtcdTokenIssuer;
import dev.fencing.issuer.Lease;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lock.LockResponse;
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

import java.io.File;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Acquire + release of one uncontended lock on a single local etcd member (Debian's etcd-server, started here): the
 * etcd issuer against raw jetcd on the same client and session lease, in one run. {@code rawLockUnlock} is the bare
 * lock API; {@code rawLockReadRevisionUnlock} is what a raw client must add to get a fencing token (reading the lock
 * key's create revision), i.e. the same work the issuer does.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 5)
@Measurement(iterations = 5, time = 10)
public class EtcdIssuerBenchmark {

    private Process etcd;
    private Path dataDir;
    private Client client;
    private EtcdTokenIssuer issuer;
    private long rawLease;
    private final ByteSequence rawName = ByteSequence.from("/bench/raw/resource", StandardCharsets.UTF_8);

    @Setup(Level.Trial)
    public void start() throws Exception {
        int clientPort = freePort();
        int peerPort = freePort();
        dataDir = Files.createTempDirectory("fencing-bench-etcd");
        String endpoint = "http://127.0.0.1:" + clientPort;
        etcd = new ProcessBuilder(System.getProperty("bench.etcd", "/usr/bin/etcd"), "--data-dir", dataDir.toString(),
                "--listen-client-urls", endpoint, "--advertise-client-urls", endpoint,
                "--listen-peer-urls", "http://127.0.0.1:" + peerPort,
                "--initial-advertise-peer-urls", "http://127.0.0.1:" + peerPort,
                "--initial-cluster", "default=http://127.0.0.1:" + peerPort, "--log-level", "error")
                .redirectErrorStream(true).redirectOutput(dataDir.resolve("etcd.log").toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try (Socket ignored = new Socket("127.0.0.1", clientPort)) {
                break;
            } catch (java.io.IOException e) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("etcd did not start");
                }
                Thread.sleep(50);
            }
        }
        client = Client.builder().endpoints(endpoint).build();
        issuer = new EtcdTokenIssuer(client, endpoint, "/bench/issuer/", Duration.ofSeconds(30), null);
        rawLease = client.getLeaseClient().grant(30).get(30, TimeUnit.SECONDS).getID();
        client.getLeaseClient().keepAlive(rawLease, new io.grpc.stub.StreamObserver<>() {
            public void onNext(io.etcd.jetcd.lease.LeaseKeepAliveResponse r) {
            }

            public void onError(Throwable t) {
            }

            public void onCompleted() {
            }
        });
    }

    @TearDown(Level.Trial)
    public void stop() throws Exception {
        issuer.close();
        client.close();
        etcd.destroy();
        etcd.waitFor(30, TimeUnit.SECONDS);
        try (var files = Files.walk(dataDir)) {
            files.sorted(java.util.Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        }
    }

    @Benchmark
    public void rawLockUnlock() throws Exception {
        LockResponse locked = client.getLockClient().lock(rawName, rawLease).get(10, TimeUnit.SECONDS);
        client.getLockClient().unlock(locked.getKey()).get(10, TimeUnit.SECONDS);
    }

    @Benchmark
    public long rawLockReadRevisionUnlock() throws Exception {
        LockResponse locked = client.getLockClient().lock(rawName, rawLease).get(10, TimeUnit.SECONDS);
        long revision = client.getKVClient().get(locked.getKey()).get(10, TimeUnit.SECONDS).getKvs().get(0)
                .getCreateRevision();
        client.getLockClient().unlock(locked.getKey()).get(10, TimeUnit.SECONDS);
        return revision;
    }

    @Benchmark
    public long etcdTokenIssuer() {
        Lease lease = issuer.acquire("resource", Duration.ofSeconds(10));
        lease.close();
        return lease.token().value();
    }

    private static int freePort() throws java.io.IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
