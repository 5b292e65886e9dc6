package dev.fencing.verify.network;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Forwards TCP connections accepted on one address (a host-side veth address) to a target (PostgreSQL on
 * loopback), byte for byte, two daemon threads per connection; a connection closed on one side is closed on the
 * other. It lets a client in a namespace reach a server that listens on loopback only, without reconfiguring the
 * server. {@link #close()} stops accepting and closes every connection; idempotent.
 */
public final class TcpRelay implements AutoCloseable {

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private TcpRelay(ServerSocket server, InetSocketAddress target) {
        this.server = server;
        this.target = target;
    }

    /** Listens on a free port of {@code address} and forwards each connection to {@code target}. */
    public static TcpRelay start(String address, InetSocketAddress target) {
        try {
            ServerSocket server = new ServerSocket(0, 50, InetAddress.getByName(address));
            TcpRelay relay = new TcpRelay(server, target);
            Thread accept = new Thread(relay::accept, "relay-" + address + ":" + server.getLocalPort());
            accept.setDaemon(true);
            accept.start();
            return relay;
        } catch (IOException e) {
            throw new NetworkException("cannot listen on " + address + " to relay to " + target + ": " + e, e);
        }
    }

    /** The port it listens on. */
    public int port() {
        return server.getLocalPort();
    }

    private void accept() {
        while (!closed) {
            Socket in;
            try {
                in = server.accept();
            } catch (IOException e) {
                return;                         // closed
            }
            Socket out = new Socket();
            try {
                out.connect(target, 5_000);
            } catch (IOException e) {
                closeQuietly(in);
                closeQuietly(out);
                continue;
            }
            sockets.add(in);
            sockets.add(out);
            if (closed) {
                closeQuietly(in);
                closeQuietly(out);
                return;
            }
            pipe(in, out);
            pipe(out, in);
        }
    }

    private void pipe(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream i = from.getInputStream(); OutputStream o = to.getOutputStream()) {
                int n;
                while ((n = i.read(buffer)) != -1) {
                    o.write(buffer, 0, n);
                    o.flush();
                }
            } catch (IOException ignored) {
                // one side went away
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                sockets.remove(from);
                sockets.remove(to);
            }
        }, "relay-pipe");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        sockets.clear();
    }
}
