package dev.fencing.verify.network;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The namespaces on the real kernel: a client inside one connects to the host through its veth, fails to while the
 * lock address is cut (the store address still works), connects again once healed, and nothing is left after close
 * or after a sweep of a dead runner's leftovers.
 */
class ClientNetworkTest {

    private final List<AutoCloseable> closeLater = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : closeLater) {
            c.close();
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aCutStopsTheLockAddressOnlyAndAHealBringsItBack() throws Exception {
        ClientNetwork net = Namespaces.create();
        closeLater.add(net);
        assertThat(Namespaces.list()).contains(net.namespace());
        assertThat(Namespaces.links()).contains(net.hostLink());
        ServerSocket lock = listen(net.lockAddress());
        ServerSocket store = listen(net.storeAddress());

        assertThat(connectFrom(net, net.lockAddress(), lock.getLocalPort())).as("lock before the cut").isTrue();
        net.cut();
        assertThat(net.isCut()).isTrue();
        assertThat(connectFrom(net, net.lockAddress(), lock.getLocalPort())).as("lock while cut").isFalse();
        assertThat(connectFrom(net, net.storeAddress(), store.getLocalPort())).as("store while cut").isTrue();
        net.heal();
        assertThat(connectFrom(net, net.lockAddress(), lock.getLocalPort())).as("lock after the heal").isTrue();

        net.close();
        assertThat(Namespaces.list()).doesNotContain(net.namespace());
        assertThat(Namespaces.links()).doesNotContain(net.hostLink());
        assertThat(Namespaces.open()).doesNotContain(net);
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void theRelayCarriesBytesFromTheNamespaceToALoopbackServer() throws Exception {
        ClientNetwork net = Namespaces.create();
        closeLater.add(net);
        ServerSocket echo = listen("127.0.0.1");
        Thread server = new Thread(() -> {
            try (Socket s = echo.accept(); InputStream in = s.getInputStream();
                 OutputStream out = s.getOutputStream()) {
                out.write(in.readNBytes(5));
            } catch (IOException ignored) {
                // the test fails on the reply
            }
        });
        server.setDaemon(true);
        server.start();
        TcpRelay relay = TcpRelay.start(net.storeAddress(), new InetSocketAddress("127.0.0.1", echo.getLocalPort()));
        closeLater.add(relay);
        Process p = new ProcessBuilder(inside(net, "exec 3<>/dev/tcp/" + net.storeAddress() + "/" + relay.port()
                + " && printf hello >&3 && head -c 5 <&3")).start();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("hello");
    }

    /**
     * A control run starting beside it sweeps with the same code and may remove the planted leftovers first, so the
     * test asserts what is left, not how many this sweep removed: a sweep that removed nothing fails it either way.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aSweepRemovesWhatADeadRunnerLeftAndKeepsWhatALiveOneHas() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        long dead = gone.pid();
        String namespace = "fv-" + dead + "-0";
        String link = "fv" + dead + "h0";
        try {
            Ip.run("netns", "add", namespace);
            Ip.run("link", "add", link, "type", "veth", "peer", "name", "fv" + dead + "c0");
            ClientNetwork mine = Namespaces.create();
            closeLater.add(mine);

            Namespaces.sweep();

            assertThat(Namespaces.list()).doesNotContain(namespace).contains(mine.namespace());
            assertThat(Namespaces.links()).doesNotContain(link).contains(mine.hostLink());
        } finally {
            Ip.quietly("netns", "del", namespace);
            Ip.quietly("link", "del", link);
        }
    }

    private ServerSocket listen(String address) throws IOException {
        ServerSocket s = new ServerSocket(0, 50, InetAddress.getByName(address));
        closeLater.add(s);
        Thread t = new Thread(() -> {
            while (!s.isClosed()) {
                try {
                    s.accept().close();
                } catch (IOException e) {
                    return;
                }
            }
        });
        t.setDaemon(true);
        if (!address.equals("127.0.0.1")) {
            t.start();
        }
        return s;
    }

    /** Whether a TCP connection from inside the namespace to address:port is made within 3 s. */
    private static boolean connectFrom(ClientNetwork net, String address, int port) throws Exception {
        Process p = new ProcessBuilder(inside(net, "exec 3<>/dev/tcp/" + address + "/" + port))
                .redirectErrorStream(true).start();
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
            return false;
        }
        return p.exitValue() == 0;
    }

    private static List<String> inside(ClientNetwork net, String script) {
        List<String> command = new ArrayList<>(net.commandPrefix());
        command.addAll(List.of("timeout", "3", "bash", "-c", script));
        return command;
    }
}
