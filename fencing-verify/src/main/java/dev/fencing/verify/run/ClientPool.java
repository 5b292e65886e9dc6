package dev.fencing.verify.run;

import dev.fencing.verify.client.ClientSettings;
import dev.fencing.verify.nemesis.PostgresConnectionKiller;
import dev.fencing.verify.nemesis.Target;
import dev.fencing.verify.nemesis.Targets;
import dev.fencing.verify.workload.LockSetTables;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Every client process of a run, the killed ones included, so that none can be left behind: process numbers
 * count up from 1, a replacement gets the next one.
 */
final class ClientPool implements Targets {

    private final RunConfig config;
    private final Path dir;
    private final LockSetTables tables;
    private final Signals signals;
    private final String issuerAddress;
    private final List<ClientProcess> all = new ArrayList<>();
    private final List<ClientProcess> live = new ArrayList<>();
    private int nextProcess = 1;
    private boolean closed;

    ClientPool(RunConfig config, Path dir, LockSetTables tables, Signals signals, String issuerAddress) {
        this.issuerAddress = issuerAddress;
        this.config = config;
        this.dir = dir;
        this.tables = tables;
        this.signals = signals;
    }

    /** Starts one more client; null once the pool is closing. */
    synchronized ClientProcess start() {
        if (closed) {
            return null;
        }
        int process = nextProcess++;
        ClientSettings settings = new ClientSettings(process, dir.resolve("client-" + process + ".jsonl"),
                clientJdbcUrl(process), tables.storeDatabase().user(), tables.fence(), tables.lease(),
                tables.data(config.workload()), config.lease(), config.fence(), config.maxSleep(),
                config.seed() * 31 + process, config.fenceReads(), config.issuer(), issuerAddress, config.workload(),
                config.resources());
        try {
            ClientProcess client = ClientProcess.start(settings, dir.resolve("client-" + process + ".log"), signals);
            all.add(client);
            live.add(client);
            return client;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start client " + process, e);
        }
    }

    /** The store's URL with the client's session name on PostgreSQL, so the kill-backend nemesis can find it. */
    private String clientJdbcUrl(int process) {
        String url = tables.storeDatabase().url();
        return url.startsWith("jdbc:postgresql:")
                ? PostgresConnectionKiller.withApplicationName(url, tables.prefix(), "client-" + process)
                : url;
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
        }
        return alive;
    }
}
