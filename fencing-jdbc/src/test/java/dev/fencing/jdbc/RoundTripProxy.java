package dev.fencing.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP relay between a test's JDBC driver and the database that counts network round trips: a round trip starts
 * each time the client sends after the server last spoke (the driver cannot send its next request before it has
 * read the answer it waits for). One client connection at a time; the relay threads are daemons, closed with it.
 */
final class RoundTripProxy implements AutoCloseable {

    private final ServerSocket server;
    private final AtomicInteger roundTrips = new AtomicInteger();
    /** Whether the server spoke last: the next client bytes open a new round trip. */
    private final AtomicBoolean serverSpokeLast = new AtomicBoolean(true);
    private volatile Socket client;
    private volatile Socket upstream;

    RoundTripProxy(String host, int port) throws IOException {
        server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(() -> {
            try {
                client = server.accept();
                upstream = new Socket(host, port);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                relay(client.getInputStream(), upstream.getOutputStream(), true);
                relay(upstream.getInputStream(), client.getOutputStream(), false);
            } catch (IOException e) {
                // closed before a client came
            }
        }, "round-trip-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return server.getLocalPort();
    }

    /** Round trips since the last {@link #reset()}. */
    int roundTrips() {
        return roundTrips.get();
    }

    void reset() {
        roundTrips.set(0);
    }

    private void relay(InputStream in, OutputStream out, boolean fromClient) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[65536];
            try {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    if (fromClient) {
                        if (serverSpokeLast.compareAndSet(true, false)) {
                            roundTrips.incrementAndGet();
                        }
                    } else {
                        serverSpokeLast.set(true); // before the client can see the answer
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // connection closed
            }
        }, fromClient ? "round-trip-proxy-up" : "round-trip-proxy-down");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        server.close();
        if (client != null) {
            client.close();
        }
        if (upstream != null) {
            upstream.close();
        }
    }
}
