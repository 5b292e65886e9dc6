package dev.fencing.verify.cluster;

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

/** Free loopback ports, and what listens on them. */
public final class Ports {

    /** The address every member binds: loopback only. */
    public static final String LOOPBACK = "127.0.0.1";

    private Ports() {
    }

    /**
     * {@code count} distinct free TCP ports on loopback: all are held open together while they are chosen, so no
     * two are the same, then released for the members to bind.
     */
    public static List<Integer> free(int count) {
        List<ServerSocket> held = new ArrayList<>();
        try {
            List<Integer> ports = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK));
                held.add(socket);
                ports.add(socket.getLocalPort());
            }
            return ports;
        } catch (IOException e) {
            throw new LockServiceException("no free loopback port: " + e, e);
        } finally {
            for (ServerSocket socket : held) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // released either way
                }
            }
        }
    }

    /** Whether something accepts TCP connections on the loopback port now. */
    public static boolean listening(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(LOOPBACK, port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Sends a ZooKeeper four-letter command ({@code srvr}, {@code ruok}, ...) to the loopback client port and returns
     * the whole answer, or {@code null} when the server cannot be reached or does not answer within the timeout.
     */
    static String fourLetterWord(int port, String command, int timeoutMillis) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(LOOPBACK, port), timeoutMillis);
            socket.setSoTimeout(timeoutMillis);
            OutputStream out = socket.getOutputStream();
            out.write(command.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return null;
        }
    }
}
