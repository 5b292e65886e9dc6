package dev.fencing.jdbc;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP relay between a test's pgjdbc connection and PostgreSQL that counts the network round trips the driver
 * makes, by reading the protocol messages it sends: each request the driver then waits on ends with a Sync (extended
 * protocol, pgjdbc's default) or is a simple Query; the {@code BEGIN} pgjdbc puts in front of a transaction's first
 * statement is a simple Query sent in the same write as that statement, so it rides with it and is not counted.
 * (Timing the bytes instead miscounts: the driver's buffered writes can reach the server in pieces, and the server
 * answers the {@code BEGIN} before the rest arrives.) With {@link #mariaDb}, the relay reads the MariaDB protocol
 * instead: every command the client sends (a packet with sequence number 0) is a request it waits on, and the text of
 * each {@code COM_QUERY} is kept ({@link #queries()}). One client connection; relay threads are daemons.
 */
final class RoundTripProxy implements AutoCloseable {

    private static final int SSL_REQUEST = 80877103;
    private static final int GSS_REQUEST = 80877104;

    private final ServerSocket server;
    private final AtomicInteger roundTrips = new AtomicInteger();
    private volatile Socket client;
    private volatile Socket upstream;

    RoundTripProxy(String host, int port) throws IOException {
        this(host, port, false);
    }

    /** A relay to a MariaDB server: counts the client's commands. */
    static RoundTripProxy mariaDb(String host, int port) throws IOException {
        return new RoundTripProxy(host, port, true);
    }

    private final boolean mariaDbProtocol;
    private final java.util.List<String> queries = new java.util.concurrent.CopyOnWriteArrayList<>();

    private RoundTripProxy(String host, int port, boolean mariaDbProtocol) throws IOException {
        this.mariaDbProtocol = mariaDbProtocol;
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
        queries.clear();
    }

    /** MariaDB: the texts of the {@code COM_QUERY} commands since the last {@link #reset()}, in order. */
    java.util.List<String> queries() {
        return java.util.List.copyOf(queries);
    }

    private void relay(InputStream in, OutputStream out, boolean fromClient) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[65536];
            Object messages = !fromClient ? null : mariaDbProtocol ? new MariaDbCommands() : new ClientMessages();
            try {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    if (messages instanceof ClientMessages pg) {
                        pg.feed(buffer, n);
                    } else if (messages instanceof MariaDbCommands maria) {
                        maria.feed(buffer, n);
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

    /** Splits the client's bytes into protocol messages and counts the ones that end a round trip. */
    private final class ClientMessages {
        private final ByteArrayOutputStream pending = new ByteArrayOutputStream();
        private boolean started;

        void feed(byte[] buffer, int n) {
            pending.write(buffer, 0, n);
            byte[] bytes = pending.toByteArray();
            int at = 0;
            while (true) {
                if (!started) { // SSL/GSS request or startup message: length, code; no type byte
                    if (bytes.length - at < 8) {
                        break;
                    }
                    int length = readInt(bytes, at);
                    int code = readInt(bytes, at + 4);
                    if (bytes.length - at < length) {
                        break;
                    }
                    at += length;
                    started = code != SSL_REQUEST && code != GSS_REQUEST;
                    continue;
                }
                if (bytes.length - at < 5) {
                    break;
                }
                int length = readInt(bytes, at + 1);
                if (bytes.length - at < 1 + length) {
                    break;
                }
                char type = (char) bytes[at];
                if (type == 'S') {
                    roundTrips.incrementAndGet();
                } else if (type == 'Q') {
                    String sql = new String(bytes, at + 5, length - 5, StandardCharsets.UTF_8).trim();
                    if (!sql.startsWith("BEGIN")) {
                        roundTrips.incrementAndGet();
                    }
                }
                at += 1 + length;
            }
            pending.reset();
            pending.write(bytes, at, bytes.length - at);
        }
    }

    /**
     * Splits the client's bytes into MariaDB packets (3-byte little-endian length, sequence number, payload) and
     * counts the commands: packets with sequence number 0 (handshake and authentication replies have other numbers).
     */
    private final class MariaDbCommands {
        private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

        void feed(byte[] buffer, int n) {
            pending.write(buffer, 0, n);
            byte[] bytes = pending.toByteArray();
            int at = 0;
            while (bytes.length - at >= 4) {
                int length = (bytes[at] & 0xff) | ((bytes[at + 1] & 0xff) << 8) | ((bytes[at + 2] & 0xff) << 16);
                if (bytes.length - at < 4 + length) {
                    break;
                }
                if (bytes[at + 3] == 0 && length > 0) {
                    roundTrips.incrementAndGet();
                    if (bytes[at + 4] == 0x03) { // COM_QUERY
                        queries.add(new String(bytes, at + 5, length - 1, StandardCharsets.UTF_8));
                    }
                }
                at += 4 + length;
            }
            pending.reset();
            pending.write(bytes, at, bytes.length - at);
        }
    }

    private static int readInt(byte[] b, int at) {
        return ((b[at] & 0xff) << 24) | ((b[at + 1] & 0xff) << 16) | ((b[at + 2] & 0xff) << 8) | (b[at + 3] & 0xff);
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
