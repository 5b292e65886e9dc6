package dev.fencing.hazelcast;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.cluster.Address;
import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.cp.CPSubsystemConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.cp.CPGroup;
import com.hazelcast.cp.session.CPSession;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Embedded Hazelcast members on loopback forming a CP group of three: TCP-IP join on free ports, a cluster name of
 * their own, CP sessions of 5 s heartbeated every second, a Raft leader missed after 1.5 s.
 */
final class CpGroup implements AutoCloseable {

    static final int SESSION_TTL_SECONDS = 5;
    private static final Logger HAZELCAST_LOG = Logger.getLogger("com.hazelcast"); // kept: the level sticks

    static {
        HAZELCAST_LOG.setLevel(Level.SEVERE);
        System.setProperty("hazelcast.phone.home.enabled", "false");
        System.setProperty("java.net.preferIPv4Stack", "true");
    }

    private static CpGroup shared;

    final String clusterName = "fencing-test-" + UUID.randomUUID();
    final List<Integer> ports = new ArrayList<>();
    final List<HazelcastInstance> members = new ArrayList<>();
    private final List<HazelcastInstance> clients = new ArrayList<>();

    /** One group for the test classes that do not crash a member; shut down with the JVM. */
    static synchronized CpGroup shared() {
        if (shared == null) {
            shared = new CpGroup(3, 3);
            Runtime.getRuntime().addShutdownHook(new Thread(shared::close));
        }
        return shared;
    }

    /** Starts {@code size} members, {@code cpMembers} of them CP members (0: unsafe mode), in parallel. */
    CpGroup(int size, int cpMembers) {
        for (int i = 0; i < size; i++) {
            ports.add(freePort());
        }
        long started = System.nanoTime();
        for (int i = 0; i < size; i++) {                  // one after the other: each joins the first one's cluster
            members.add(Hazelcast.newHazelcastInstance(config(i, cpMembers)));
        }
        long joined = System.nanoTime();
        if (cpMembers > 0) {
            for (HazelcastInstance member : members) {
                try {
                    if (!member.getCPSubsystem().getCPSubsystemManagementService()
                            .awaitUntilDiscoveryCompleted(60, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("CP discovery did not complete within 60 s");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
        }
        System.err.printf("CpGroup %s: %d members joined in %d ms, CP discovery after %d ms more%n", clusterName, size,
                (joined - started) / 1_000_000, (System.nanoTime() - joined) / 1_000_000);
    }

    private Config config(int index, int cpMembers) {
        Config config = new Config();
        config.setClusterName(clusterName);
        config.setInstanceName(clusterName + "-" + index);
        config.setProperty("hazelcast.wait.seconds.before.join", "0");
        config.setProperty("hazelcast.max.wait.seconds.before.join", "0");
        config.setProperty("hazelcast.shutdownhook.enabled", "false");
        config.setProperty("hazelcast.partition.count", "7");          // the CP structures do not use partitions
        config.setProperty("hazelcast.phone.home.enabled", "false");
        config.getNetworkConfig().setPort(ports.get(index)).setPortAutoIncrement(false);
        config.getNetworkConfig().getInterfaces().setEnabled(true).addInterface("127.0.0.1");
        JoinConfig join = config.getNetworkConfig().getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getAutoDetectionConfig().setEnabled(false);
        join.getTcpIpConfig().setEnabled(true).setMembers(addresses());
        CPSubsystemConfig cp = config.getCPSubsystemConfig();
        cp.setCPMemberCount(cpMembers);
        if (cpMembers > 0) {
            cp.setSessionHeartbeatIntervalSeconds(1);
            cp.setSessionTimeToLiveSeconds(SESSION_TTL_SECONDS);
            cp.setMissingCPMemberAutoRemovalSeconds(SESSION_TTL_SECONDS);
            cp.getRaftAlgorithmConfig().setLeaderHeartbeatPeriodInMillis(500).setMaxMissedLeaderHeartbeatCount(3)
                    .setLeaderElectionTimeoutInMillis(1000);
        }
        return config;
    }

    List<String> addresses() {
        return ports.stream().map(p -> "127.0.0.1:" + p).toList();
    }

    /** A client of this cluster, shut down with the group. */
    synchronized HazelcastInstance client() {
        ClientConfig config = new ClientConfig().setClusterName(clusterName);
        config.getNetworkConfig().setAddresses(addresses());
        HazelcastInstance client = HazelcastClient.newHazelcastClient(config);
        clients.add(client);
        return client;
    }

    /**
     * A client started without waiting for a cluster, pointed at a port where nothing listens; shut down with the
     * group.
     */
    synchronized HazelcastInstance unreachableClient(int port) {
        ClientConfig config = new ClientConfig().setClusterName(clusterName);
        config.getNetworkConfig().addAddress("127.0.0.1:" + port);
        config.getConnectionStrategyConfig().setAsyncStart(true);
        HazelcastInstance client = HazelcastClient.newHazelcastClient(config);
        clients.add(client);
        return client;
    }

    /** Ends the CP session of {@code member} in the default CP group, as the group does when its heartbeats stop. */
    void closeSessionOf(HazelcastInstance member) throws Exception {
        Address address = member.getCluster().getLocalMember().getAddress();
        var sessions = member.getCPSubsystem().getCPSessionManagementService();
        for (CPSession session : sessions.getAllSessions(CPGroup.DEFAULT_GROUP_NAME).toCompletableFuture()
                .get(30, TimeUnit.SECONDS)) {
            if (address.equals(session.endpoint())) {
                sessions.forceCloseSession(CPGroup.DEFAULT_GROUP_NAME, session.id()).toCompletableFuture()
                        .get(30, TimeUnit.SECONDS);
            }
        }
    }

    static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public synchronized void close() {
        for (HazelcastInstance client : clients) {
            client.getLifecycleService().terminate();
        }
        clients.clear();
        for (HazelcastInstance member : members) {
            member.getLifecycleService().terminate();
        }
    }
}
