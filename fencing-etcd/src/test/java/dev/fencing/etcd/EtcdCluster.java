package dev.fencing.etcd;

import io.etcd.jetcd.Client;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Real etcd members (Debian's {@code etcd-server}, which must be installed: {@code apt-get install etcd-server}, as
 * {@code .ci/run} does; a missing binary fails with that message), started on free loopback ports with data under
 * {@code target/}, stopped and deleted on close, and also when the cluster fails to start. A port found free can be
 * taken by another process before etcd binds it, so a start that fails is tried again on new ports (three attempts);
 * a member that exits during start fails at once with the end of its log.
 */
final class EtcdCluster implements AutoCloseable {

    private static final int ATTEMPTS = 3;

    final List<Member> members = new ArrayList<>();
    private Path root;

    final class Member {
        final String name;
        final int clientPort;
        final int peerPort;
        final Path dataDir;
        Process process;

        Member(String name, int clientPort, int peerPort) {
            this.name = name;
            this.clientPort = clientPort;
            this.peerPort = peerPort;
            this.dataDir = root.resolve(name);
        }

        String endpoint() {
            return "http://127.0.0.1:" + clientPort;
        }

        void start(String binary, String initialCluster, String token) throws IOException {
            List<String> command = List.of(binary, "--name", name, "--data-dir", dataDir.toString(),
                    "--listen-client-urls", endpoint(), "--advertise-client-urls", endpoint(),
                    "--listen-peer-urls", "http://127.0.0.1:" + peerPort,
                    "--initial-advertise-peer-urls", "http://127.0.0.1:" + peerPort,
                    "--initial-cluster", initialCluster, "--initial-cluster-state", "new",
                    "--initial-cluster-token", token, "--heartbeat-interval", "50", "--election-timeout", "500",
                    "--log-level", "warn");
            process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(root.resolve(name + ".log").toFile()).start();
        }

        void kill() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    EtcdCluster(int size) throws Exception {
        this(size, binary()); // a missing binary fails before anything starts
    }

    EtcdCluster(int size, String binary) throws Exception {
        List<Exception> failures = new ArrayList<>();
        for (int attempt = 1; ; attempt++) {
            root = Paths.get("target", "etcd-" + UUID.randomUUID()).toAbsolutePath();
            Files.createDirectories(root);
            try {
                start(size, binary);
                return;
            } catch (Error e) {
                close();
                throw e;
            } catch (Exception e) {
                Exception failure = new IllegalStateException("etcd start, attempt " + attempt + " of " + ATTEMPTS
                        + ": " + e.getMessage() + logTails(), e);
                try {
                    close();    // no member left running behind a failed start
                } catch (Exception cleanup) {
                    failure.addSuppressed(cleanup);
                }
                members.clear();
                failures.add(failure);
                if (attempt == ATTEMPTS) {
                    Exception last = failures.remove(failures.size() - 1);
                    failures.forEach(last::addSuppressed);
                    throw last;
                }
            }
        }
    }

    private void start(int size, String binary) throws Exception {
        List<Integer> ports = freePorts(2 * size);
        for (int i = 0; i < size; i++) {
            members.add(new Member("m" + i, ports.get(2 * i), ports.get(2 * i + 1)));
        }
        String initialCluster = members.stream().map(m -> m.name + "=http://127.0.0.1:" + m.peerPort)
                .collect(Collectors.joining(","));
        String token = "fencing-" + UUID.randomUUID();
        for (Member member : members) {
            member.start(binary, initialCluster, token);
        }
        for (Member member : members) {
            awaitPort(member);
        }
        try (Client client = client()) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) { // ready when a write goes through the consensus
                try {
                    client.getKVClient().put(io.etcd.jetcd.ByteSequence.from("/ready".getBytes()),
                            io.etcd.jetcd.ByteSequence.from("1".getBytes())).get(5, TimeUnit.SECONDS);
                    break;
                } catch (Exception e) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("etcd cluster did not become ready; logs in " + root, e);
                    }
                    Thread.sleep(100);
                }
            }
        }
    }

    String endpoints() {
        return members.stream().map(Member::endpoint).collect(Collectors.joining(","));
    }

    Client client() {
        return Client.builder().endpoints(members.stream().map(Member::endpoint).toArray(String[]::new))
                .connectTimeout(java.time.Duration.ofSeconds(2)).build();
    }

    /** The member that leads right now. */
    Member leader() throws Exception {
        try (Client client = client()) {
            for (Member member : members) {
                if (!member.process.isAlive()) {
                    continue;
                }
                var status = client.getMaintenanceClient().statusMember(member.endpoint()).get(5, TimeUnit.SECONDS);
                if (status.getLeader() == status.getHeader().getMemberId()) {
                    return member;
                }
            }
        }
        throw new IllegalStateException("no leader");
    }

    @Override
    public void close() throws Exception {
        for (Member member : members) {
            if (member.process != null) {
                member.kill();
            }
        }
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        }
    }

    /** Distinct free loopback ports: all held open together while they are chosen, so no two are the same. */
    private static List<Integer> freePorts(int count) throws IOException {
        List<ServerSocket> held = new ArrayList<>();
        try {
            List<Integer> ports = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
                held.add(socket);
                ports.add(socket.getLocalPort());
            }
            return ports;
        } finally {
            for (ServerSocket socket : held) {
                socket.close();
            }
        }
    }

    private static void awaitPort(Member member) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            if (!member.process.isAlive()) {
                throw new IllegalStateException("etcd member " + member.name + " exited with "
                        + member.process.exitValue() + " before it listened on port " + member.clientPort);
            }
            try (Socket ignored = new Socket("127.0.0.1", member.clientPort)) {
                return;
            } catch (IOException e) {
                Thread.sleep(50);
            }
        }
        throw new IllegalStateException("etcd member " + member.name + " did not listen on port " + member.clientPort
                + " within 30 s");
    }

    /** The last lines of each member's log, for a failed start's message (the logs are deleted with the cluster). */
    private String logTails() {
        StringBuilder tails = new StringBuilder();
        for (Member member : members) {
            Path log = root.resolve(member.name + ".log");
            try {
                List<String> lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
                tails.append("\n--- ").append(member.name).append(" (client ").append(member.clientPort)
                        .append(", peer ").append(member.peerPort).append(") log, last lines:\n")
                        .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size())));
            } catch (IOException | RuntimeException e) {
                tails.append("\n--- ").append(member.name).append(" log unreadable: ").append(e);
            }
        }
        return tails.toString();
    }

    /** The etcd binary. Tests install nothing: a missing binary fails the test, saying what to install. */
    static String binary() {
        return binary("/usr/bin/etcd", "/usr/local/bin/etcd");
    }

    static String binary(String... candidates) {
        for (String candidate : candidates) {
            if (new File(candidate).canExecute()) {
                return candidate;
            }
        }
        throw new IllegalStateException("These tests run a real etcd server, and no etcd binary was found at "
                + String.join(" or ", candidates) + ". Install it first: 'apt-get install etcd-server' on "
                + "Debian/Ubuntu (.ci/run does), or put an etcd 3.4+ binary at /usr/local/bin/etcd.");
    }
}
