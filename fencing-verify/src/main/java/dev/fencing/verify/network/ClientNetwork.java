package dev.fencing.verify.network;

import java.util.List;

/**
 * One client's own network namespace, joined to this host by a veth pair with a /29 of its own: the client side has
 * {@link #clientAddress()}, the host side two addresses, {@link #lockAddress()} (where the client reaches the lock
 * service) and {@link #storeAddress()} (where it reaches the store). {@link #cut()} drops every packet between the
 * client and the lock address, both ways, with two {@code blackhole} policy rules inside the namespace, and
 * {@link #heal()} removes them; the store address stays reachable throughout. {@link #close()} removes the veth pair
 * and the namespace and may be called any number of times. Made by {@link Namespaces#create()}.
 */
public final class ClientNetwork implements AutoCloseable {

    private static final String CUT_TO = "100";
    private static final String CUT_FROM = "101";

    private final String namespace;
    private final String hostLink;
    private final String clientLink;
    private final String lockAddress;
    private final String storeAddress;
    private final String clientAddress;
    private boolean cut;
    private boolean closed;

    ClientNetwork(String namespace, String hostLink, String clientLink, String lockAddress, String storeAddress,
                  String clientAddress) {
        this.namespace = namespace;
        this.hostLink = hostLink;
        this.clientLink = clientLink;
        this.lockAddress = lockAddress;
        this.storeAddress = storeAddress;
        this.clientAddress = clientAddress;
    }

    /** Creates the namespace, the veth pair and the addresses, and brings the links up. */
    void open() {
        Ip.run("netns", "add", namespace);
        Ip.run("link", "add", hostLink, "type", "veth", "peer", "name", clientLink);
        Ip.run("link", "set", clientLink, "netns", namespace);
        Ip.run("addr", "add", lockAddress + "/29", "dev", hostLink);
        Ip.run("addr", "add", storeAddress + "/29", "dev", hostLink);
        Ip.run("link", "set", hostLink, "up");
        Ip.run("-n", namespace, "addr", "add", clientAddress + "/29", "dev", clientLink);
        Ip.run("-n", namespace, "link", "set", clientLink, "up");
        Ip.run("-n", namespace, "link", "set", "lo", "up");
    }

    /** The namespace's name: {@code fv-<runner pid>-<n>}. */
    public String namespace() {
        return namespace;
    }

    /** The host-side veth's name: {@code fv<runner pid>h<n>}. */
    public String hostLink() {
        return hostLink;
    }

    /** The host address the client reaches the lock service at; {@link #cut()} makes it unreachable. */
    public String lockAddress() {
        return lockAddress;
    }

    /** The host address the client reaches the store at; never cut. */
    public String storeAddress() {
        return storeAddress;
    }

    /** The client's own address, inside the namespace. */
    public String clientAddress() {
        return clientAddress;
    }

    /** What to put before a command line to run it inside the namespace. */
    public List<String> commandPrefix() {
        return List.of("ip", "netns", "exec", namespace);
    }

    /** Drops all traffic between the client and {@link #lockAddress()}, both ways; a no-op when already cut. */
    public synchronized void cut() {
        if (closed) {
            throw new IllegalStateException("namespace " + namespace + " is closed: nothing to cut");
        }
        if (cut) {
            return;
        }
        Ip.run("-n", namespace, "rule", "add", "to", lockAddress + "/32", "blackhole", "priority", CUT_TO);
        try {
            Ip.run("-n", namespace, "rule", "add", "from", lockAddress + "/32", "blackhole", "priority", CUT_FROM);
        } catch (NetworkException e) {
            Ip.quietly("-n", namespace, "rule", "del", "priority", CUT_TO);
            throw e;
        }
        cut = true;
    }

    /** Lets the traffic through again; a no-op when not cut or closed. */
    public synchronized void heal() {
        if (!cut || closed) {
            return;
        }
        NetworkException to = Ip.quietly("-n", namespace, "rule", "del", "priority", CUT_TO);
        NetworkException from = Ip.quietly("-n", namespace, "rule", "del", "priority", CUT_FROM);
        cut = false;
        if (to != null || from != null) {
            throw to != null ? to : from;
        }
    }

    /** Whether the lock address is cut now. */
    public synchronized boolean isCut() {
        return cut;
    }

    /**
     * Removes the veth pair and the namespace (a process still running inside keeps it alive in the kernel until it
     * exits, but its name is gone). Never throws; a failure is printed on stderr.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        cut = false;
        Namespaces.closed(this);
        Ip.quietly("link", "del", hostLink);       // takes the peer inside the namespace with it
        NetworkException e = Ip.quietly("netns", "del", namespace);
        if (e != null && Namespaces.list().contains(namespace)) {
            System.err.println("fencing-verify: could not remove namespace " + namespace + ": " + e.getMessage());
        }
    }

    @Override
    public String toString() {
        return namespace + " (client " + clientAddress + ", lock " + lockAddress + ", store " + storeAddress + ")";
    }
}
