package dev.fencing.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A TCP proxy on a free loopback port in front of one target port, that a test can partition: while partitioned it
 * keeps every connection open but forwards nothing in either direction (what a client sees when the network between
 * it and the server silently drops packets), so neither side notices anything but silence. {@link #heal()} closes
 * the connections it cut (their streams lost bytes) and forwards again. Closing stops every thread it started.
 */
public final class PartitionProxy implements AutoCloseable {

    private final ServerSocket server;
    private final int targetPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "partition-proxy");
        thread.setDaemon(true);
        return thread;
    });
    private volatile boolean partitioned;

    /** Starts forwarding from a free loopback port to {@code targetPort} on loopback. */
    public PartitionProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        threads.execute(this::acceptLoop);
    }

    /** The loopback port clients connect to instead of the target's. */
    public int port() {
        return server.getLocalPort();
    }

    /** {@code http://127.0.0.1:<port>}, for clients configured with a URL. */
    public String endpoint() {
        return "http://127.0.0.1:" + port();
    }

    /** Stops forwarding: bytes from either side are read and dropped, connections stay open. */
    public void partition() {
        partitioned = true;
    }

    /** Forwards again, on fresh connections: the ones that lost bytes are closed. */
    public void heal() {
        closeConnections();
        partitioned = false;
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                sockets.add(client);
                Socket target = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(target);
                threads.execute(() -> pump(client, target));
                threads.execute(() -> pump(target, client));
            } catch (IOException e) {
                // closed, or the target refused: the client sees its connection fail and retries
            }
        }
    }

    private void pump(Socket from, Socket to) {
        byte[] buffer = new byte[16 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                if (!partitioned) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            }
        } catch (IOException e) {
            // one side went away
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private void closeConnections() {
        for (Socket socket : sockets) {
            closeQuietly(socket);
        }
        sockets.clear();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        closeConnections();
        threads.shutdownNow();
    }
}
