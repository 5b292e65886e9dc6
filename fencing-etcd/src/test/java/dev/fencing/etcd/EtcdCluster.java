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
 * Real etcd members (Debian's {@code etcd-server}, installed here with apt when missing and running as root),
 * started on free loopback ports with data under {@code target/}, stopped and deleted on close.
 */
final class EtcdCluster implements AutoCloseable {

    final List<Member> members = new ArrayList<>();
    private final Path root;

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

        void start(String initialCluster, String token) throws IOException {
            List<String> command = List.of(binary(), "--name", name, "--data-dir", dataDir.toString(),
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
        root = Paths.get("target", "etcd-" + UUID.randomUUID()).toAbsolutePath();
        Files.createDirectories(root);
        for (int i = 0; i < size; i++) {
            members.add(new Member("m" + i, freePort(), freePort()));
        }
        String initialCluster = members.stream().map(m -> m.name + "=http://127.0.0.1:" + m.peerPort)
                .collect(Collectors.joining(","));
        String token = "fencing-" + UUID.randomUUID();
        for (Member member : members) {
            member.start(initialCluster, token);
        }
        for (Member member : members) {
            awaitPort(member.clientPort);
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

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static void awaitPort(int port) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            try (Socket ignored = new Socket("127.0.0.1", port)) {
                return;
            } catch (IOException e) {
                Thread.sleep(50);
            }
        }
        throw new IllegalStateException("etcd did not listen on port " + port);
    }

    private static volatile String binary;

    /** The etcd binary; installs Debian's etcd-server when it is missing and this process may. */
    static synchronized String binary() throws IOException {
        if (binary != null) {
            return binary;
        }
        for (String candidate : new String[] {"/usr/bin/etcd", "/usr/local/bin/etcd"}) {
            if (new File(candidate).canExecute()) {
                return binary = candidate;
            }
        }
        try {
            Process install = new ProcessBuilder("apt-get", "install", "-y", "-q", "etcd-server")
                    .redirectErrorStream(true).start();
            String output = new String(install.getInputStream().readAllBytes());
            if (install.waitFor() != 0 || !new File("/usr/bin/etcd").canExecute()) {
                throw new IllegalStateException("etcd is not installed and 'apt-get install etcd-server' failed:\n" + output);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        return binary = "/usr/bin/etcd";
    }
}
