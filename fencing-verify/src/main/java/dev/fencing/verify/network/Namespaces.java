package dev.fencing.verify.network;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Makes the harness's client namespaces and takes them away again. Names carry the pid of the JVM that made them
 * ({@code fv-<pid>-<n>}, veth {@code fv<pid>h<n>}), so that {@link #sweep()} can remove what a runner killed with
 * SIGKILL left behind; addresses come from one 10.x.0.0/16 per JVM that no address or route of this machine uses
 * (x from 200 to 249), a /29 per namespace. Every namespace not yet closed is closed by a JVM shutdown hook.
 */
public final class Namespaces {

    /** The first characters of every namespace and link the harness makes. */
    public static final String PREFIX = "fv";

    private static final Pattern NAMESPACE = Pattern.compile("fv-(\\d+)-(\\d+)");
    private static final Pattern LINK = Pattern.compile("fv(\\d+)[hc](\\d+)");
    private static final int BLOCKS = 65_536 / 8;
    private static final Set<ClientNetwork> OPEN = ConcurrentHashMap.newKeySet();
    private static int next;
    private static int secondOctet = -1;
    private static boolean hookInstalled;

    private Namespaces() {
    }

    /** A new namespace joined to the host by a veth pair, its addresses set and links up. */
    public static ClientNetwork create() {
        long pid = ProcessHandle.current().pid();
        int n;
        int x;
        synchronized (Namespaces.class) {
            if (!hookInstalled) {
                Runtime.getRuntime().addShutdownHook(new Thread(Namespaces::closeAll, "fencing-verify-namespaces"));
                hookInstalled = true;
            }
            if (secondOctet < 0) {
                secondOctet = freeSecondOctet(pid);
            }
            n = next++;
            x = secondOctet;
        }
        int block = (n % BLOCKS) * 8;
        String base = "10." + x + "." + (block / 256) + ".";
        int last = block % 256;
        ClientNetwork network = new ClientNetwork("fv-" + pid + "-" + n, "fv" + pid + "h" + n, "fv" + pid + "c" + n,
                base + (last + 1), base + (last + 2), base + (last + 3));
        OPEN.add(network);
        try {
            network.open();
        } catch (RuntimeException e) {
            network.close();
            throw e;
        }
        return network;
    }

    /** 10.x.0.0/16 for this JVM: the first x from 200 + pid % 50 on that no address or route of the machine uses. */
    private static int freeSecondOctet(long pid) {
        String used = Ip.run("-4", "-o", "addr", "show") + Ip.run("-4", "route", "show", "table", "all");
        if (used.contains("10.0.0.0/8")) {
            throw new NetworkException("a route covers all of 10.0.0.0/8: no private range left for namespaces");
        }
        for (int i = 0; i < 50; i++) {
            int x = 200 + (int) ((pid + i) % 50);
            if (!Pattern.compile("(^|[^0-9])10\\." + x + "\\.", Pattern.MULTILINE).matcher(used).find()) {
                return x;
            }
        }
        throw new NetworkException("10.200.0.0/16 to 10.249.0.0/16 are all in use on this machine");
    }

    static void closed(ClientNetwork network) {
        OPEN.remove(network);
    }

    /** The namespaces of this JVM not closed yet. */
    public static List<ClientNetwork> open() {
        return List.copyOf(OPEN);
    }

    /** Closes every namespace of this JVM not closed yet. */
    public static void closeAll() {
        for (ClientNetwork n : new ArrayList<>(OPEN)) {
            n.close();
        }
    }

    /** The names of every network namespace on this machine ({@code ip netns list}). */
    public static List<String> list() {
        List<String> names = new ArrayList<>();
        for (String line : Ip.run("netns", "list").split("\n")) {
            String name = line.strip().split(" ")[0];
            if (!name.isEmpty()) {
                names.add(name);
            }
        }
        return names;
    }

    /** The names of every network link of the host namespace that the harness made ({@code fv<pid>h<n>}). */
    public static List<String> links() {
        List<String> names = new ArrayList<>();
        for (String line : Ip.run("-o", "link", "show").split("\n")) {
            String[] parts = line.split(":\\s+", 3);
            if (parts.length >= 2) {
                String name = parts[1].split("@")[0];
                if (LINK.matcher(name).matches()) {
                    names.add(name);
                }
            }
        }
        return names;
    }

    /**
     * Removes the namespaces and host links of harness JVMs that are gone (a runner killed with SIGKILL runs no
     * hooks); those of live JVMs stay. Returns how many it removed.
     */
    public static int sweep() {
        int removed = 0;
        for (String name : list()) {
            Matcher m = NAMESPACE.matcher(name);
            if (m.matches() && isGone(m.group(1)) && Ip.quietly("netns", "del", name) == null) {
                removed++;
            }
        }
        for (String link : links()) {
            Matcher m = LINK.matcher(link);
            if (m.matches() && isGone(m.group(1)) && Ip.quietly("link", "del", link) == null) {
                removed++;
            }
        }
        return removed;
    }

    private static boolean isGone(String pid) {
        return ProcessHandle.of(Long.parseLong(pid)).map(p -> !p.isAlive()).orElse(true);
    }
}
