package dev.fencing.verify.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.maintenance.StatusResponse;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * An etcd cluster of Debian's {@code etcd} ({@code /usr/bin/etcd} from the {@code etcd-server} package, which
 * {@code .ci/run} installs when it is missing; {@code /usr/local/bin/etcd} also works). Member {@code n} (1-based,
 * named {@code etcd-n}) lives in {@code <dir>/etcd/<n>/}: {@code data/}, {@code member.log} and {@code pid}, and
 * listens on two free loopback ports, client and peer. The cluster is bootstrapped statically: every member gets the
 * initial cluster of all of them and a cluster token unique to the run. A killed member restarts with
 * {@code --initial-cluster-state existing} on its own data directory, so it rejoins as the same member.
 *
 * <p>The cluster serves when a write through jetcd to all endpoints and its read back succeed; a restarted member
 * serves again when it answers a status request naming a leader. The leader is found from each running member's
 * status.
 */
public final class EtcdCluster extends AbstractLockService {

    /** Where the binary is looked for, in order. */
    public static final List<String> BINARIES = List.of("/usr/bin/etcd", "/usr/local/bin/etcd");

    private final String binary;
    private final String token = "fencing-verify-" + UUID.randomUUID();
    private volatile Client client;

    /** Three members under {@code runDir/etcd/}. */
    public EtcdCluster(Path runDir) {
        this(runDir, 3, false);
    }

    /**
     * @param runDir              the run's directory: the members live in {@code runDir/etcd/<n>/}
     * @param size                how many members
     * @param clientsOnAnyAddress client ports on every address ({@code 0.0.0.0}) instead of loopback only, for
     *                            clients in other network namespaces; peer ports stay on loopback
     */
    public EtcdCluster(Path runDir, int size, boolean clientsOnAnyAddress) {
        super(runDir.resolve("etcd"), clientsOnAnyAddress);
        if (size < 1) {
            throw new IllegalArgumentException("a cluster needs a member, asked for " + size);
        }
        this.binary = binary();
        List<Integer> ports = Ports.free(2 * size);
        for (int n = 1; n <= size; n++) {
            int at = 2 * (n - 1);
            addMember(new Member("etcd-" + n, n, directory().resolve(String.valueOf(n)), ports.subList(at, at + 2)));
        }
    }

    /** The etcd binary; fails before anything starts, saying what to install, when there is none. */
    static String binary() {
        for (String candidate : BINARIES) {
            if (new File(candidate).canExecute()) {
                return candidate;
            }
        }
        throw new LockServiceException("no etcd binary at " + String.join(" or ", BINARIES)
                + ": install Debian's etcd-server ('apt-get install etcd-server'; .ci/run does)");
    }

    @Override
    public String name() {
        return "etcd";
    }

    static String endpoint(Member member) {
        return "http://" + Ports.LOOPBACK + ":" + member.ports.get(0);
    }

    static String peerUrl(Member member) {
        return "http://" + Ports.LOOPBACK + ":" + member.ports.get(1);
    }

    /** The client endpoint of a member. */
    public String endpoint(String member) {
        return endpoint(member(member));
    }

    @Override
    public String clientAddress(String host) {
        return memberList().stream().map(m -> "http://" + host + ":" + m.ports.get(0))
                .collect(Collectors.joining(","));
    }

    @Override
    void prepare() {
        // every setting is on the command line
    }

    /**
     * Heartbeat 100 ms and election timeout 1 s (etcd's defaults): a killed leader is replaced within about a
     * second, while the scheduling delays of this shared 2-core machine do not start elections on their own.
     */
    @Override
    List<String> command(Member member, boolean again) {
        String initialCluster = memberList().stream().map(m -> m.name + "=" + peerUrl(m))
                .collect(Collectors.joining(","));
        return new ArrayList<>(List.of(binary, "--name", member.name,
                "--data-dir", member.dir.resolve("data").toString(),
                "--listen-client-urls", "http://" + clientBindAddress() + ":" + member.ports.get(0),
                "--advertise-client-urls", endpoint(member),
                "--listen-peer-urls", peerUrl(member), "--initial-advertise-peer-urls", peerUrl(member),
                "--initial-cluster", initialCluster, "--initial-cluster-state", again ? "existing" : "new",
                "--initial-cluster-token", token,
                "--heartbeat-interval", "100", "--election-timeout", "1000",
                "--logger", "zap", "--log-outputs", "stderr", "--log-level", "info"));
    }

    private Client client() {
        Client current = client;
        if (current == null) {
            synchronized (this) {
                current = client;
                if (current == null) {
                    current = Client.builder()
                            .endpoints(memberList().stream().map(EtcdCluster::endpoint).toArray(String[]::new))
                            .connectTimeout(Duration.ofSeconds(2)).build();
                    client = current;
                }
            }
        }
        return current;
    }

    @Override
    void closeClients() {
        Client current;
        synchronized (this) {
            current = client;
            client = null;
        }
        if (current != null) {
            current.close();
        }
    }

    @Override
    boolean serving() {
        for (Member member : memberList()) {
            if (!member.alive() || !Ports.listening(member.ports.get(0))) {
                return false;
            }
        }
        ByteSequence key = ByteSequence.from("/fencing-verify/ready", StandardCharsets.UTF_8);
        ByteSequence value = ByteSequence.from(token, StandardCharsets.UTF_8);
        try {
            client().getKVClient().put(key, value).get(3, TimeUnit.SECONDS);
            var read = client().getKVClient().get(key).get(3, TimeUnit.SECONDS).getKvs();
            if (read.isEmpty() || !read.get(0).getValue().equals(value)) {
                return false;
            }
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return false;
        }
        for (Member member : memberList()) {
            if (!memberServing(member)) {
                return false;
            }
        }
        return true;
    }

    /** The member's own status, or null when it does not answer within 2 s. */
    private StatusResponse status(Member member) {
        if (!member.alive()) {
            return null;
        }
        try {
            return client().getMaintenanceClient().statusMember(endpoint(member)).get(2, TimeUnit.SECONDS);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return null;
        }
    }

    @Override
    boolean memberServing(Member member) {
        StatusResponse status = status(member);
        return status != null && status.getLeader() != 0;
    }

    @Override
    Member leaderMember() {
        for (Member member : memberList()) {
            StatusResponse status = status(member);
            if (status != null && status.getLeader() != 0 && status.getLeader() == status.getHeader().getMemberId()) {
                return member;
            }
        }
        return null;
    }
}
