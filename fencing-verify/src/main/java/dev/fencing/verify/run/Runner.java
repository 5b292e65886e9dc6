package dev.fencing.verify.run;

import dev.fencing.verify.checker.CheckResult;
import dev.fencing.verify.checker.Checker;
import dev.fencing.verify.checker.MarkdownSummary;
import dev.fencing.verify.checker.SummaryJson;
import dev.fencing.verify.cluster.LockService;
import dev.fencing.verify.history.History;
import dev.fencing.verify.history.HistoryEvent;
import dev.fencing.verify.history.HistoryReader;
import dev.fencing.verify.history.HistoryWriter;
import dev.fencing.verify.history.NemesisEvent;
import dev.fencing.verify.history.Op;
import dev.fencing.verify.history.OpType;
import dev.fencing.verify.nemesis.CompactNemesis;
import dev.fencing.verify.nemesis.KillBackendNemesis;
import dev.fencing.verify.nemesis.KillNemesis;
import dev.fencing.verify.nemesis.NemesisChoice;
import dev.fencing.verify.nemesis.Nemesis;
import dev.fencing.verify.nemesis.NemesisSchedule;
import dev.fencing.verify.nemesis.PartitionNemesis;
import dev.fencing.verify.nemesis.Partitions;
import dev.fencing.verify.network.Namespaces;
import dev.fencing.verify.network.NetworkException;
import dev.fencing.verify.nemesis.PauseNemesis;
import dev.fencing.verify.nemesis.PostgresConnectionKiller;
import dev.fencing.verify.nemesis.RestartLockServiceNemesis;
import dev.fencing.verify.plot.RunPlots;
import dev.fencing.verify.workload.FinalReads;
import dev.fencing.verify.workload.LockSetTables;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs a workload (lock-set, counter, append) with client processes and nemeses, then checks it. The tokens come
 * from the JDBC lease (PostgreSQL or MariaDB), a ZooKeeper ensemble or an etcd cluster the run starts; the store is
 * PostgreSQL or MariaDB.
 *
 * <ol>
 *   <li>creates the run's tables (fence, lease, the workloads'; named after the run) and its directory, and starts
 *       the lock service (ZooKeeper, etcd) if the issuer has one,</li>
 *   <li>starts the clients and waits until each is ready,</li>
 *   <li>runs the nemesis schedule for the time limit,</li>
 *   <li>stops the clients (each finishes its operation in flight; then SIGTERM, SIGKILL),</li>
 *   <li>reads the store once more ({@link FinalReads}: every resource's final {@code read}, or the append log's
 *       commit rows; process 0),</li>
 *   <li>merges the clients' histories and its own into {@code history.jsonl}, runs {@link Checker#standard()} and
 *       writes {@code summary.json} and {@code summary.md}.</li>
 * </ol>
 *
 * Nothing is left behind: every client process and lock service member is destroyed and the tables are dropped in
 * a finally block and, should the JVM be stopped during the run (Ctrl-C), by a shutdown hook.
 */
public final class Runner {

    /** How long the clients get to start (8 JVMs starting at once on 2 loaded cores take a while). */
    static final long START_TIMEOUT_MILLIS = 120_000;
    /** The issuers a run can take its tokens from. */
    public static final List<String> ISSUERS = List.of("jdbc-postgresql", "jdbc-mariadb", "zookeeper", "etcd");
    /** The workloads a run can run. */
    public static final List<String> WORKLOADS = List.of("lock-set", "counter", "append");

    /** The databases the fence store (and the set) can be on. */
    public static final List<String> STORES = List.of("postgresql", "mariadb");

    /** How long the clients get to finish their operation in flight at the end. */
    static final long STOP_GRACE_MILLIS = 10_000;

    private final RunConfig config;
    private final PrintWriter log;
    /** Database sessions the kill-backend nemesis terminated. */
    private final AtomicInteger sessionsKilled = new AtomicInteger();
    /** Compactions the compact nemesis ran, the rows they folded, and those refused for want of the table lock. */
    private final AtomicInteger compactions = new AtomicInteger();
    private final AtomicLong rowsFolded = new AtomicLong();
    private final AtomicInteger compactionsRefused = new AtomicInteger();
    /** The compact nemesis's admin on the fence table, once the tables exist; closed with the run. */
    private FenceCompaction compaction;

    /** What the partition nemesis cuts: the client pool, once it exists. */
    private Partitions partitions;

    public Runner(RunConfig config, PrintWriter log) {
        this.config = config;
        this.log = log;
    }

    /** Runs and checks; the result's directory holds the history and the reports. */
    public RunResult run() throws IOException, SQLException, InterruptedException {
        if (!WORKLOADS.contains(config.workload()) || !ISSUERS.contains(config.issuer())
                || !STORES.contains(config.store())) {
            throw new IllegalArgumentException("only the workloads " + WORKLOADS + " on " + ISSUERS
                    + " with a store on " + STORES + " run so far");
        }
        NemesisChoice.requireLockServiceFor(config.nemeses(), config.issuer());
        long started = System.nanoTime();
        Random random = new Random(config.seed());
        String id = HexFormat.of().toHexDigits(random.nextInt());
        String name = config.workload() + "-" + config.issuer() + "-" + config.store() + "-fence-"
                + (config.fence() ? "on" : "off") + "-"
                + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")) + "-" + id;
        Path dir = config.outDir() != null ? config.outDir() : config.outRoot().resolve(name);
        Files.createDirectories(dir);
        String prefix = "verify_" + id;
        LockSetTables tables = new LockSetTables(config.storeDatabase(), config.leaseDatabase(), prefix);
        Signals signals = new Signals();
        // ZooKeeper, etcd: a 3-member service of its own, started before the clients and closed after them; with
        // the partition nemesis its client ports listen on every address, for clients in network namespaces
        boolean partition = config.nemeses().contains("partition");
        sweepNamespaces();
        LockService lockService = LockServices.forIssuer(config.issuer(), dir, partition);
        if (lockService != null) {
            try {
                lockService.start();
            } catch (RuntimeException e) {
                lockService.close();
                signals.close();
                throw e;
            }
            log.printf("  %s started: %s%n", lockService.name(), lockService.clientAddress());
            log.flush();
        }
        ClientPool pool = new ClientPool(config, dir, tables, signals, lockService != null
                ? lockService.clientAddress() : config.leaseDatabase() != null ? config.leaseDatabase().url() : "");
        if (partition) {
            pool.isolate(new ClientIsolation(config.storeDatabase(), config.leaseDatabase(), config.issuer(),
                    lockService));
        }
        partitions = pool;
        Cleanup cleanup = new Cleanup(pool, tables, signals, lockService);
        Thread hook = new Thread(cleanup::run, "fencing-verify-cleanup");
        Runtime.getRuntime().addShutdownHook(hook);
        AtomicInteger strikes = new AtomicInteger();
        Path runnerHistory = dir.resolve("runner.jsonl");
        try (HistoryWriter history = HistoryWriter.open(runnerHistory)) {
            tables.create(config.resources());
            log.printf("run %s: %d clients, %s, nemesis %s, fence %s; tables %s_*%n", name, config.clients(),
                    config.timeLimit(), config.nemeses(), config.fence() ? "on" : "off", prefix);
            log.flush();
            List<ClientProcess> initial = new ArrayList<>();
            for (int i = 0; i < config.clients(); i++) {
                initial.add(pool.start());
            }
            long readyBy = System.nanoTime() + START_TIMEOUT_MILLIS * 1_000_000;
            for (ClientProcess c : initial) {
                long left = Math.max(1, (readyBy - System.nanoTime()) / 1_000_000);
                if (!c.awaitReady(left)) {
                    throw new IllegalStateException("client " + c.processNumber() + " did not start within "
                            + START_TIMEOUT_MILLIS / 1000 + " s: see " + dir.resolve("client-" + c.processNumber()
                            + ".log"));
                }
            }
            log.printf("  %d clients ready after %.1f s%n", config.clients(), (System.nanoTime() - started) / 1e9);
            log.flush();

            if (config.compacted()) {
                compaction = new FenceCompaction(config, tables.fence(), tables.lease());
            }
            Consumer<NemesisEvent> record = event -> {
                history.write(event);
                if (event.isStart()) {
                    strikes.incrementAndGet();
                }
            };
            Consumer<Throwable> onError = e -> {
                log.println("  nemesis error: " + e);
                log.flush();
            };
            // the compact nemesis strikes on a schedule of its own, so that compactions also run while another
            // nemesis's fault lasts (a holder paused past its lease, its row idle): the others strike one at a time
            List<Nemesis> all = nemeses(lockService, tables);
            List<Nemesis> concurrent = all.stream().filter(n -> n instanceof CompactNemesis).toList();
            List<Nemesis> serial = all.stream().filter(n -> !(n instanceof CompactNemesis)).toList();
            List<Thread> nemesisThreads = new ArrayList<>();
            nemesisThreads.add(new Thread(new NemesisSchedule(serial, pool, random, config.intervalMin(),
                    config.intervalMax(), record, onError), "nemesis"));
            if (!concurrent.isEmpty()) {
                nemesisThreads.add(new Thread(new NemesisSchedule(concurrent, pool, new Random(random.nextLong()),
                        config.intervalMin(), config.intervalMax(), record, onError), "nemesis-compact"));
            }
            nemesisThreads.forEach(Thread::start);
            try {
                Thread.sleep(config.timeLimit().toMillis());
            } finally {
                for (Thread t : nemesisThreads) {
                    t.interrupt();
                }
                for (Thread t : nemesisThreads) {
                    t.join(config.pauseMax().toMillis() + 30_000);
                }
            }
            int alive = pool.stopAll(STOP_GRACE_MILLIS);
            if (alive > 0) {
                throw new IllegalStateException(alive + " client processes survived SIGKILL");
            }
            FinalReads.record(config.workload(), config.resources(), tables, history);
        } finally {
            if (compaction != null) {
                compaction.close();
            }
            cleanup.run();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException ignored) {
                // the JVM is shutting down: the hook runs (and finds the cleanup done)
            }
        }
        History merged = merge(dir, pool.histories(), runnerHistory);
        CheckResult result = Checker.standard().check(merged);
        Duration duration = Duration.ofNanos(System.nanoTime() - started);
        Map<String, Object> run = new LinkedHashMap<>();
        run.put("name", name);
        run.putAll(config.describe());
        run.put("processes-started", pool.started());
        run.put("nemesis-strikes", strikes.get());
        if (config.nemeses().contains(KillBackendNemesis.NAME)) {
            run.put("sessions-terminated", sessionsKilled.get());
        }
        if (config.compacted()) {
            run.put("compactions", compactions.get());
            run.put("compactions-refused", compactionsRefused.get());
            run.put("rows-folded", rowsFolded.get());
        }
        run.put("duration-s", Math.round(duration.toMillis() / 100.0) / 10.0);
        run.put("java", System.getProperty("java.version"));
        run.put("cpus", Runtime.getRuntime().availableProcessors());
        SummaryJson.write(result, run, dir.resolve("summary.json"));
        MarkdownSummary.write(result, run, dir.resolve("summary.md"));
        RunPlots.writeAndLink(merged, result, dir, dir.resolve("summary.md"), log);
        return new RunResult(name, dir, result, pool.started(), strikes.get(), duration, prefix, pool.networks());
    }

    private List<Nemesis> nemeses(LockService lockService, LockSetTables tables) {
        List<Nemesis> list = new ArrayList<>();
        for (String n : config.nemeses()) {
            switch (n) {
                case "pause" -> list.add(new PauseNemesis(config.pauseMin(), config.pauseMax(), Duration.ofSeconds(2)));
                case "kill" -> list.add(new KillNemesis());
                case "partition" -> list.add(new PartitionNemesis(config.pauseMin(), config.pauseMax(),
                        Duration.ofSeconds(5), partitions));
                case "none" -> { }
                case RestartLockServiceNemesis.NAME -> list.add(new RestartLockServiceNemesis(lockService,
                        NemesisChoice.DOWN_MIN, NemesisChoice.DOWN_MAX));
                case KillBackendNemesis.NAME -> list.add(new KillBackendNemesis(new PostgresConnectionKiller(
                        config.jdbcUrl(), config.user(), tables.prefix()), sessionsKilled::addAndGet));
                case CompactNemesis.NAME -> list.add(new CompactNemesis(compaction, config.compactIdle(),
                        new CompactNemesis.Tally() {
                            @Override
                            public void compacted(long rows) {
                                compactions.incrementAndGet();
                                rowsFolded.addAndGet(rows);
                            }

                            @Override
                            public void refused() {
                                compactionsRefused.incrementAndGet();
                            }
                        }));
                default -> throw new IllegalArgumentException("nemesis " + n + " is not implemented yet");
            }
        }
        return list;
    }

    /** Removes the namespaces a runner killed with SIGKILL left behind (it ran no shutdown hook). */
    private void sweepNamespaces() {
        try {
            int removed = Namespaces.sweep();
            if (removed > 0) {
                log.printf("  removed %d namespaces and links left by runners that are gone%n", removed);
            }
        } catch (NetworkException e) {
            log.println("  could not look for leftover namespaces: " + e.getMessage());
        }
    }

    /** Every process's history and the runner's, ordered by monotonic time, written to history.jsonl. */
    static History merge(Path dir, List<Path> clientHistories, Path runnerHistory) throws IOException {
        List<HistoryEvent> events = new ArrayList<>();
        int truncated = 0;
        List<Path> files = new ArrayList<>(clientHistories);
        files.add(runnerHistory);
        for (Path file : files) {
            if (!Files.exists(file)) {
                continue;                   // a client killed before its first operation
            }
            History h = HistoryReader.read(file);
            events.addAll(h.events());
            truncated += h.truncatedLines();
        }
        events.sort(Comparator.comparingLong(Runner::mono));
        Path out = dir.resolve("history.jsonl");
        Files.deleteIfExists(out);
        try (HistoryWriter writer = HistoryWriter.open(out)) {
            events.forEach(writer::write);
        }
        return new History(events, truncated);
    }

    private static long mono(HistoryEvent e) {
        if (e instanceof Op op) {
            return op.mono();
        }
        if (e instanceof NemesisEvent n) {
            return n.mono();
        }
        return Long.MAX_VALUE;
    }

    /** Destroys every client, closes the signal shell and drops the tables; once, whoever calls first. */
    private static final class Cleanup implements Runnable {
        private final ClientPool pool;
        private final LockSetTables tables;
        private final Signals signals;
        private final LockService lockService;
        private final AtomicBoolean done = new AtomicBoolean();

        Cleanup(ClientPool pool, LockSetTables tables, Signals signals, LockService lockService) {
            this.pool = pool;
            this.tables = tables;
            this.signals = signals;
            this.lockService = lockService;
        }

        @Override
        public void run() {
            if (!done.compareAndSet(false, true)) {
                return;
            }
            try {
                pool.stopAll(2_000);
            } finally {
                if (lockService != null) {
                    try {
                        lockService.close();
                    } catch (RuntimeException e) {
                        System.err.println("fencing-verify: could not stop " + lockService.name() + ": " + e);
                    }
                }
                signals.close();
                SQLException e = tables.drop();
                if (e != null) {
                    System.err.println("fencing-verify: could not drop the run's tables: " + e.getMessage());
                }
            }
        }
    }
}
