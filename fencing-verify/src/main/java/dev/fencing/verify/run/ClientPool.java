package dev.fencing.verify.run;

import dev.fencing.verify.client.ClientSettings;
import dev.fencing.verify.nemesis.PostgresConnectionKiller;
import dev.fencing.verify.nemesis.Partitions;
import dev.fencing.verify.nemesis.Target;
import dev.fencing.verify.nemesis.Targets;
import dev.fencing.verify.network.ClientNetwork;
import dev.fencing.verify.workload.LockSetTables;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every client process of a run, the killed ones included, so that none can be left behind: process numbers
 * count up from 1, a replacement gets the next one.
 */
final class ClientPool implements Targets, Partitions {

    private final RunConfig config;
    private final Path dir;
    private final LockSetTables tables;
    private final Signals signals;
    private final String issuerAddress;
    private final List<ClientProcess> all = new ArrayList<>();
    private final List<ClientProcess> live = new ArrayList<>();
    private int nextProcess = 1;
    private boolean closed;
    /** Null: every client runs in the host's network namespace. */
    private ClientIsolation isolation;
    private final Map<ClientProcess, ClientIsolation.Isolated> isolated = new ConcurrentHashMap<>();
    /** Every namespace this pool's clients ran in, closed or not. */
    private final List<ClientNetwork> networks = new ArrayList<>();

    ClientPool(RunConfig config, Path dir, LockSetTables tables, Signals signals, String issuerAddress) {
        this.issuerAddress = issuerAddress;
        this.config = config;
        this.dir = dir;
        this.tables = tables;
        this.signals = signals;
    }

    /** From now on every client starts in a network namespace of its own (for the partition nemesis). */
    synchronized void isolate(ClientIsolation isolation) {
        this.isolation = isolation;
    }

    /** Starts one more client; null once the pool is closing. */
    synchronized ClientProcess start() {
        if (closed) {
            return null;
        }
        int process = nextProcess++;
        ClientIsolation.Isolated net = isolation == null ? null : isolation.open();
        if (net != null) {
            networks.add(net.network());
        }
        ClientSettings settings = new ClientSettings(process, dir.resolve("client-" + process + ".jsonl"),
                clientJdbcUrl(process, net), tables.storeDatabase().user(), tables.fence(), tables.lease(),
                tables.data(config.workload()), config.lease(), config.fence(), config.maxSleep(),
                config.seed() * 31 + process, config.fenceReads(), config.issuer(),
                net == null ? issuerAddress : net.issuerAddress(), config.workload(), config.resources(),
                config.checkAtCommit(), config.compacted());
        try {
            ClientProcess client = ClientProcess.start(settings, dir.resolve("client-" + process + ".log"), signals,
                    net == null ? List.of() : net.network().commandPrefix());
            all.add(client);
            live.add(client);
            if (net != null) {
                isolated.put(client, net);
            }
            return client;
        } catch (IOException e) {
            if (net != null) {
                net.close();
            }
            throw new UncheckedIOException("cannot start client " + process, e);
        }
    }

    /** The store's URL with the client's session name on PostgreSQL, so the kill-backend nemesis can find it. */
    private String clientJdbcUrl(int process, ClientIsolation.Isolated net) {
        String url = net == null ? tables.storeDatabase().url() : net.jdbcUrl();
        return url.startsWith("jdbc:postgresql:")
                ? PostgresConnectionKiller.withApplicationName(url, tables.prefix(), "client-" + process)
                : url;
    }

    @Override
    public boolean cut(Target target) {
        ClientIsolation.Isolated net = isolated.get(target);
        if (net == null || !target.isAlive()) {
            return false;
        }
        net.network().cut();
        return true;
    }

    @Override
    public void heal(Target target) {
        ClientIsolation.Isolated net = isolated.get(target);
        if (net != null) {
            net.network().heal();
        }
    }

    /** Removes the namespace and relays of a client that is gone. */
    private void release(ClientProcess client) {
        ClientIsolation.Isolated net = isolated.remove(client);
        if (net != null) {
            net.close();
        }
    }

    /** Every namespace this pool's clients ran in, so a run can show it left none behind. */
    synchronized List<ClientNetwork> networks() {
        return List.copyOf(networks);
    }

    @Override
    public synchronized List<ClientProcess> live() {
        live.removeIf(c -> !c.isAlive());
        return List.copyOf(live);
    }

    @Override
    public void killAndReplace(Target target) throws InterruptedException {
        ClientProcess client = (ClientProcess) target;
        synchronized (this) {
            live.remove(client);
        }
        client.kill();
        release(client);
        start();
    }

    /** How many processes were started in all. */
    synchronized int started() {
        return all.size();
    }

    /** The client history files, one per process started. */
    synchronized List<Path> histories() {
        return all.stream().map(c -> c.settings().history()).toList();
    }

    /**
     * Stops every client: no more replacements, every one asked to finish its operation in flight, then each given
     * what is left of {@code graceMillis} before SIGTERM and SIGKILL. Returns how many were still alive afterwards
     * (0 unless the operating system refused to kill them).
     */
    int stopAll(long graceMillis) {
        List<ClientProcess> clients;
        synchronized (this) {
            closed = true;
            clients = List.copyOf(all);
        }
        for (ClientProcess c : clients) {
            if (c.isAlive()) {
                c.requestStop();
            }
        }
        long deadline = System.nanoTime() + graceMillis * 1_000_000;
        int alive = 0;
        for (ClientProcess c : clients) {
            long left = Math.max(0, (deadline - System.nanoTime()) / 1_000_000);
            c.destroy(left);
            if (c.isAlive()) {
                alive++;
            }
            release(c);
        }
        return alive;
    }
}
