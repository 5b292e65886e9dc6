package dev.fencing.sample;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import dev.fencing.hazelcast.HazelcastTokenIssuer;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * A Hazelcast CP Subsystem {@code FencedLock} whose token is its fence, on an embedded CP group of three members.
 * Client 1 is a Hazelcast client that goes away (a crash): the CP group closes its CP session, as it does when a
 * holder's heartbeats stop for the session's time-to-live, and hands the lock over.
 */
final class HazelcastStrategy implements Strategy {

    private static final int SESSION_TTL_SECONDS = 5;

    @Override
    public String name() {
        return "hazelcast";
    }

    @Override
    public Row run(SampleDatabase db, Options options, Progress progress) throws Throwable {
        String cluster = "fencing-sample-" + UUID.randomUUID();
        List<String> addresses = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            addresses.add("127.0.0.1:" + freePort());
        }
        List<HazelcastInstance> members = new ArrayList<>();
        HazelcastInstance client1 = null;
        try {
            progress.say(name(), "starting an embedded CP group of three members ...");
            for (String address : addresses) {
                members.add(Hazelcast.newHazelcastInstance(member(cluster, address, addresses)));
            }
            ClientConfig clientConfig = new ClientConfig().setClusterName(cluster);
            clientConfig.setProperty("hazelcast.logging.type", "none");
            clientConfig.getNetworkConfig().setAddresses(addresses);
            client1 = HazelcastClient.newHazelcastClient(clientConfig);
            HazelcastInstance stopping = client1;
            try (HazelcastTokenIssuer issuer1 = new HazelcastTokenIssuer(client1, "fencing-sample/",
                    Duration.ofMillis(200), null);
                 HazelcastTokenIssuer issuer2 = new HazelcastTokenIssuer(members.get(1), "fencing-sample/",
                         Duration.ofMillis(200), null)) {
                return IssuerRace.run("Hazelcast FencedLock + fence", name(), db, issuer1, issuer2,
                        "hz-accounts:42", () -> stopping.getLifecycleService().terminate(),
                        "it crashes and the CP group closes its CP session (embedded CP group)",
                        progress);
            }
        } finally {
            if (client1 != null) {
                client1.getLifecycleService().terminate();
            }
            for (HazelcastInstance member : members) {
                member.getLifecycleService().terminate();
            }
        }
    }

    private static Config member(String cluster, String address, List<String> addresses) {
        Config config = new Config();
        config.setClusterName(cluster);
        config.setProperty("hazelcast.logging.type", "none");
        config.setProperty("hazelcast.phone.home.enabled", "false");
        config.setProperty("hazelcast.wait.seconds.before.join", "0");
        config.setProperty("hazelcast.partition.count", "7");
        config.getNetworkConfig().setPort(Integer.parseInt(address.substring(address.indexOf(':') + 1)))
                .setPortAutoIncrement(false);
        config.getNetworkConfig().getInterfaces().setEnabled(true).addInterface("127.0.0.1");
        JoinConfig join = config.getNetworkConfig().getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getAutoDetectionConfig().setEnabled(false);
        join.getTcpIpConfig().setEnabled(true).setMembers(addresses);
        config.getCPSubsystemConfig().setCPMemberCount(3).setSessionHeartbeatIntervalSeconds(1)
                .setSessionTimeToLiveSeconds(SESSION_TTL_SECONDS)
                .setMissingCPMemberAutoRemovalSeconds(SESSION_TTL_SECONDS);
        return config;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
