package dev.fencing.verify.cluster;

import dev.fencing.etcd.EtcdTokenIssuer;
import dev.fencing.zookeeper.ZooKeeperTokenIssuer;
import org.junit.jupiter.api.Test;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static dev.fencing.verify.cluster.LockServiceChecks.assertNothingLeft;
import static dev.fencing.verify.cluster.LockServiceChecks.runDir;
import static dev.fencing.verify.cluster.LockServiceChecks.token;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Services built with {@code clientsOnAnyAddress} serve clients that reach this machine on another of its
 * addresses (as a client in its own network namespace does through a veth pair), while members still talk to each
 * other on loopback.
 */
class AnyAddressTest {

    /** An IPv4 address of this machine other than loopback, if it has one. */
    private static Optional<String> otherAddress() throws SocketException {
        for (NetworkInterface nic : NetworkInterface.networkInterfaces().toList()) {
            if (!nic.isUp() || nic.isLoopback()) {
                continue;
            }
            for (InetAddress address : nic.inetAddresses().toList()) {
                if (address instanceof Inet4Address) {
                    return Optional.of(address.getHostAddress());
                }
            }
        }
        return Optional.empty();
    }

    @Test
    void zooKeeperClientsOnAnotherAddress() throws Exception {
        ZooKeeperEnsemble zk = new ZooKeeperEnsemble(runDir("zk-any"), 3, true);
        String host = otherAddress().orElse(null);
        assertThat(zk.clientAddress("10.1.2.1")).matches("(10\\.1\\.2\\.1:\\d+,){2}10\\.1\\.2\\.1:\\d+");
        List<Integer> ports = zk.ports();
        try (zk) {
            zk.start();
            String cfg = Files.readString(zk.directory().resolve("1").resolve("zoo.cfg"));
            assertThat(cfg).contains("clientPortAddress=0.0.0.0").contains("server.2=127.0.0.1:");
            assumeTrue(host != null, "this machine has no address but loopback");
            try (Issuers.Handle<ZooKeeperTokenIssuer> handle = Issuers.zookeeper(zk.clientAddress(host),
                    Duration.ofSeconds(10))) {
                assertThat(token(handle.issuer(), "set")).isPositive();
            }
        }
        assertNothingLeft(zk, zk.launchedPids(), ports);
    }

    @Test
    void etcdClientsOnAnotherAddress() throws Exception {
        EtcdCluster etcd = new EtcdCluster(runDir("etcd-any"), 3, true);
        String host = otherAddress().orElse(null);
        assertThat(etcd.clientAddress("10.1.2.1"))
                .matches("(http://10\\.1\\.2\\.1:\\d+,){2}http://10\\.1\\.2\\.1:\\d+");
        List<Integer> ports = etcd.ports();
        try (etcd) {
            etcd.start();
            assumeTrue(host != null, "this machine has no address but loopback");
            try (Issuers.Handle<EtcdTokenIssuer> handle = Issuers.etcd(etcd.clientAddress(host),
                    Duration.ofSeconds(5))) {
                assertThat(token(handle.issuer(), "set")).isPositive();
            }
        }
        assertNothingLeft(etcd, etcd.launchedPids(), ports);
    }
}
