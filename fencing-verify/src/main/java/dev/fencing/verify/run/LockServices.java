package dev.fencing.verify.run;

import dev.fencing.verify.cluster.EtcdCluster;
import dev.fencing.verify.cluster.LockService;
import dev.fencing.verify.cluster.ZooKeeperEnsemble;

import java.nio.file.Path;

/**
 * The lock service a run starts for its issuer: a 3-server ZooKeeper ensemble for {@code zookeeper}, a 3-member
 * etcd cluster for {@code etcd}, none for the JDBC leases (their database is already running). Not started: the
 * runner starts it before the clients and closes it after them.
 */
final class LockServices {

    private LockServices() {
    }

    /**
     * The service of {@code issuer} under {@code runDir}, not started; null when the issuer needs none. With
     * {@code clientsOnAnyAddress} its client ports listen on every address (clients in network namespaces).
     */
    static LockService forIssuer(String issuer, Path runDir, boolean clientsOnAnyAddress) {
        return switch (issuer) {
            case "zookeeper" -> new ZooKeeperEnsemble(runDir, 3, clientsOnAnyAddress);
            case "etcd" -> new EtcdCluster(runDir, 3, clientsOnAnyAddress);
            default -> null;
        };
    }
}
