package dev.fencing.hazelcast;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.core.HazelcastInstance;
import dev.fencing.issuer.Lease;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The lock holder that {@link PausedHolderTest} pauses, as a process of its own: a Hazelcast client of the test's
 * cluster that takes the lock on a resource, prints {@code HELD <token>}, and then answers commands on stdin, one
 * line each: {@code write} prints {@code WRITE <token>} (the write it sends to the resource, carrying its token),
 * {@code lost} prints {@code LOST <true|false>}, {@code close} closes the lease and prints {@code CLOSED}, and
 * {@code exit} ends it. Arguments: cluster name, member addresses (comma-separated), resource.
 */
public final class PausedHolder {

    private static final Logger HAZELCAST_LOG = Logger.getLogger("com.hazelcast");

    private PausedHolder() {
    }

    public static void main(String[] args) throws Exception {
        HAZELCAST_LOG.setLevel(Level.SEVERE);
        ClientConfig config = new ClientConfig().setClusterName(args[0]);
        config.getNetworkConfig().setAddresses(Arrays.asList(args[1].split(",")));
        config.setProperty("hazelcast.phone.home.enabled", "false");
        HazelcastInstance client = HazelcastClient.newHazelcastClient(config);
        HazelcastTokenIssuer issuer = new HazelcastTokenIssuer(client, "paused/", Duration.ofMillis(200), null);
        Lease lease = issuer.acquire(args[2], Duration.ofSeconds(30));
        System.out.println("HELD " + lease.token().toText());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            switch (line) {
                case "write" -> System.out.println("WRITE " + lease.token().toText());
                case "lost" -> System.out.println("LOST " + lease.isLost());
                case "close" -> {
                    lease.close();
                    System.out.println("CLOSED");
                }
                case "exit" -> {
                    issuer.close();
                    client.getLifecycleService().terminate();
                    System.exit(0);
                }
                default -> System.out.println("UNKNOWN " + line);
            }
        }
        System.exit(1);
    }
}
