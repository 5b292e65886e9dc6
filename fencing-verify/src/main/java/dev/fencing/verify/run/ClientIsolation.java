package dev.fencing.verify.run;

import dev.fencing.verify.cluster.LockService;
import dev.fencing.verify.database.Database;
import dev.fencing.verify.network.ClientNetwork;
import dev.fencing.verify.network.Namespaces;
import dev.fencing.verify.network.TcpRelay;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Puts each client of a run with the partition nemesis in a network namespace of its own ({@link Namespaces}) and
 * tells it where to reach its services from there: the store through a relay on the namespace's store address, the
 * lock service on the namespace's lock address (a lock service listening on every address gives its connect string
 * for that host; the JDBC lease gets a relay of its own to PostgreSQL, with socket timeouts so that a cut lease
 * connection fails instead of hanging). Cutting the lock address thus cuts the lock service and leaves the store.
 */
final class ClientIsolation {

    private static final Pattern JDBC_URL = Pattern.compile("(jdbc:[a-z]+://)([^/:?]+)(?::(\\d+))?(/.*)");

    private final Database store;
    private final Database lease;
    private final String issuer;
    private final LockService lockService;

    /**
     * @param store       the store's database, e.g. {@code jdbc:postgresql://127.0.0.1:5432/test}
     * @param lease       the JDBC lease's database, or null when the issuer is a lock service
     * @param issuer      the run's issuer ({@code jdbc-postgresql}, {@code jdbc-mariadb} or a lock service's name)
     * @param lockService the lock service, or null for the JDBC lease
     */
    ClientIsolation(Database store, Database lease, String issuer, LockService lockService) {
        for (Database db : new Database[] {store, lease}) {
            if (db != null && !JDBC_URL.matcher(db.url()).matches()) {
                throw new IllegalArgumentException("cannot relay the database of " + db.url()
                        + ": expected jdbc:<driver>://<host>[:<port>]/<database>");
            }
        }
        this.store = store;
        this.lease = lease;
        this.issuer = issuer;
        this.lockService = lockService;
    }

    /** One client's namespace, its relays, and the addresses its settings carry. */
    record Isolated(ClientNetwork network, List<TcpRelay> relays, String jdbcUrl, String issuerAddress)
            implements AutoCloseable {
        @Override
        public void close() {
            relays.forEach(TcpRelay::close);
            network.close();
        }
    }

    /** Makes a namespace and its relays; on failure removes what it made. */
    Isolated open() {
        ClientNetwork network = Namespaces.create();
        List<TcpRelay> relays = new ArrayList<>();
        try {
            TcpRelay storeRelay = TcpRelay.start(network.storeAddress(), address(store.url()));
            relays.add(storeRelay);
            String issuerAddress;
            if (lockService != null) {
                issuerAddress = lockService.clientAddress(network.lockAddress());
            } else if (issuer.startsWith("jdbc-") && lease != null) {
                TcpRelay leaseRelay = TcpRelay.start(network.lockAddress(), address(lease.url()));
                relays.add(leaseRelay);
                issuerAddress = withTimeouts(at(lease.url(), network.lockAddress(), leaseRelay.port()));
            } else {
                throw new IllegalArgumentException("issuer " + issuer + " needs its lock service to be isolated");
            }
            return new Isolated(network, List.copyOf(relays),
                    at(store.url(), network.storeAddress(), storeRelay.port()), issuerAddress);
        } catch (RuntimeException e) {
            relays.forEach(TcpRelay::close);
            network.close();
            throw e;
        }
    }

    private static InetSocketAddress address(String jdbcUrl) {
        Matcher m = JDBC_URL.matcher(jdbcUrl);
        m.matches();
        int defaultPort = jdbcUrl.startsWith("jdbc:postgresql") ? 5432 : 3306;
        int port = m.group(3) != null ? Integer.parseInt(m.group(3)) : defaultPort;
        return new InetSocketAddress(m.group(2), port);
    }

    /** {@code jdbcUrl} with {@code host:port} in place of its own. */
    static String at(String jdbcUrl, String host, int port) {
        Matcher m = JDBC_URL.matcher(jdbcUrl);
        m.matches();
        return m.group(1) + host + ":" + port + m.group(4);
    }

    /** A cut connection fails after 5 s instead of waiting for TCP to give up (minutes). */
    private static String withTimeouts(String url) {
        String timeouts = url.startsWith("jdbc:postgresql") ? "connectTimeout=5&socketTimeout=5"
                : "connectTimeout=5000&socketTimeout=5000";          // MariaDB's driver counts milliseconds
        return url + (url.contains("?") ? "&" : "?") + timeouts;
    }
}
