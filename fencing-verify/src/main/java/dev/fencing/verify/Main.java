package dev.fencing.verify;

import dev.fencing.verify.checker.CheckResult;
import dev.fencing.verify.checker.Checker;
import dev.fencing.verify.checker.MarkdownSummary;
import dev.fencing.verify.checker.SummaryJson;
import dev.fencing.verify.history.History;
import dev.fencing.verify.checker.WindowStats;
import dev.fencing.verify.database.DatabaseKind;
import dev.fencing.verify.history.HistoryReader;
import dev.fencing.verify.nemesis.NemesisChoice;
import dev.fencing.verify.plot.RunPlots;
import dev.fencing.verify.run.RunConfig;
import dev.fencing.verify.run.RunResult;
import dev.fencing.verify.run.Runner;
import dev.fencing.verify.workload.Resources;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.CharacterCodingException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The command line of the verification harness. {@code --check <history.jsonl>} judges an existing history and
 * writes {@code summary.json} and {@code summary.md}; exit 0 when valid, 1 when invalid, 4 when unknown.
 * {@code --workload lock-set|counter|append --issuer jdbc-postgresql|jdbc-mariadb|zookeeper|etcd
 * --store postgresql|mariadb [--resources N]} runs the workload with client processes and the nemeses
 * ({@link Runner}), checks its history and exits the same way; nemeses that do not run yet exit 3, a failed run 5.
 * {@code --help} exits 0; a bad option or value exits 2 with a message naming it.
 */
@Command(name = "fencing-verify", sortOptions = false,
        description = "Runs a workload against real lock services under faults and checks its history, "
                + "or checks an existing history (--check).",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:valid (or --help)", "1:invalid: anomalies found",
                "2:bad option or value, unreadable history",
                "3:this workload, issuer, store or nemesis does not run yet",
                "4:unknown: the history holds nothing to judge", "5:the run failed (database error, interrupted)"})
public final class Main implements Callable<Integer> {

    static final List<String> WORKLOADS = List.of("lock-set", "counter", "append");
    static final List<String> ISSUERS = List.of("zookeeper", "etcd", "jdbc-postgresql", "jdbc-mariadb");
    static final List<String> STORES = List.of("postgresql", "mariadb");
    static final List<String> NEMESES = List.of("none", "pause", "kill", "partition", "restart-lock-service",
            "kill-backend", "compact");
    /** The nemeses the runner implements so far. */
    static final List<String> RUNNABLE_NEMESES = List.of("none", "pause", "kill", "partition",
            "restart-lock-service", "kill-backend", "compact");
    private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h)?");

    @Spec
    CommandSpec spec;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "show this help and exit")
    boolean help;

    @Option(names = "--workload", paramLabel = "NAME", description = "lock-set (read a set, add one element, write "
            + "it back), counter (read, add 1, write back) or append (append one row numbered by the store)")
    String workload;

    @Option(names = "--resources", paramLabel = "N", defaultValue = "1",
            description = "resources (locks and rows) each operation picks one of at random, 1 to "
                    + Resources.MAX + " (default: ${DEFAULT-VALUE})")
    int resources;

    @Option(names = "--issuer", paramLabel = "NAME", defaultValue = "zookeeper",
            description = "zookeeper, etcd, jdbc-postgresql or jdbc-mariadb (default: ${DEFAULT-VALUE})")
    String issuer;

    @Option(names = "--store", paramLabel = "NAME", defaultValue = "postgresql",
            description = "postgresql or mariadb (default: ${DEFAULT-VALUE})")
    String store;

    @Option(names = "--nemesis", paramLabel = "LIST", split = ",", defaultValue = "pause",
            description = "comma-separated faults: none, pause (SIGSTOP a lock holder past its lease), kill "
                    + "(SIGKILL a client), partition, restart-lock-service (SIGKILL a ZooKeeper or etcd member, the "
                    + "leader half the time, restart it after 2-5 s), kill-backend (pg_terminate_backend on one "
                    + "client's connections), compact (fold the fence rows idle for --compact-idle into their family "
                    + "floors; "
                    + "the clients' store is built compacted) (default: ${DEFAULT-VALUE})")
    List<String> nemesis;

    @Option(names = "--clients", paramLabel = "N", defaultValue = "8",
            description = "client processes (default: ${DEFAULT-VALUE})")
    int clients;

    @Option(names = "--time-limit", paramLabel = "DURATION", defaultValue = "120s",
            description = "how long the workload runs: 90s, 10m, 1h, 500ms (default: ${DEFAULT-VALUE})")
    String timeLimit;

    @Option(names = "--fence", paramLabel = "on|off", defaultValue = "on",
            description = "on: writes go through the fenced store; off: locks only, the control run "
                    + "(default: ${DEFAULT-VALUE})")
    String fence;

    @Option(names = "--fence-reads", paramLabel = "on|off", defaultValue = "on",
            description = "with --fence on: on fences the read of a read-modify-write as well as its write; off "
                    + "fences the write alone (default: ${DEFAULT-VALUE})")
    String fenceReads;

    @Option(names = "--check-at-commit",
            description = "the clients' JDBC store sends its checks with the transaction's COMMIT "
                    + "(checkAtCommit(true)) instead of before each fenced call; --store postgresql only")
    boolean checkAtCommit;

    @Option(names = "--compact-idle", paramLabel = "DURATION", defaultValue = "1s",
            description = "with --nemesis compact: fold the fence rows not advanced for this long: 1s, 100ms, 0ms "
                    + "(default: ${DEFAULT-VALUE})")
    String compactIdle;

    @Option(names = "--postgresql-url", paramLabel = "URL", defaultValue = RunConfig.DEFAULT_JDBC_URL,
            description = "the PostgreSQL of --store postgresql and --issuer jdbc-postgresql; its user from "
                    + "?user=..., else postgres (default: ${DEFAULT-VALUE})")
    String postgresqlUrl;

    @Option(names = "--mariadb-url", paramLabel = "URL", defaultValue = RunConfig.DEFAULT_MARIADB_URL,
            description = "the MariaDB of --store mariadb and --issuer jdbc-mariadb; its user from ?user=..., "
                    + "else root (default: ${DEFAULT-VALUE})")
    String mariadbUrl;

    @Option(names = "--max-sleep", paramLabel = "MILLIS", defaultValue = "30",
            description = "the longest random pause of a client inside its critical section, between its read and "
                    + "its write, in ms; with the partition nemesis make it longer than the session "
                    + "(default: ${DEFAULT-VALUE})")
    long maxSleepMillis;

    @Option(names = "--out", paramLabel = "DIR",
            description = "where reports go (default: target/verify/<run> for a run, the history's directory for "
                    + "--check)")
    Path out;

    @Option(names = "--check", paramLabel = "HISTORY",
            description = "check an existing history (one JSON event per line) and write summary.json and "
                    + "summary.md; no workload runs")
    Path check;

    /** Parses {@code args}, runs and returns the exit code, printing to the given writers; never exits the JVM. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine line = new CommandLine(new Main());
        line.setOut(out);
        line.setErr(err);
        int code = line.execute(args);
        out.flush();
        err.flush();
        return code;
    }

    /** Runs with {@code args} and exits with the code {@link #run} returns. */
    public static void main(String[] args) {
        System.exit(run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
    }

    @Override
    public Integer call() throws IOException {
        if (check != null) {
            if (workload != null) {
                throw invalid("--check judges an existing history: give either --check or --workload, not both");
            }
            return check();
        }
        if (workload == null) {
            throw invalid("Missing --workload (" + String.join(", ", WORKLOADS) + ") or --check HISTORY");
        }
        oneOf("--workload", workload, WORKLOADS);
        oneOf("--issuer", issuer, ISSUERS);
        oneOf("--store", store, STORES);
        for (String n : nemesis) {
            oneOf("--nemesis", n, NEMESES);
        }
        try {
            NemesisChoice.requireLockServiceFor(nemesis, issuer);
        } catch (IllegalArgumentException e) {
            throw invalid("Invalid combination: " + e.getMessage());
        }
        if (checkAtCommit && !store.equals("postgresql")) {
            throw invalid("Invalid combination: --check-at-commit runs on --store postgresql only (the JDBC store "
                    + "refuses checkAtCommit on " + store + ")");
        }
        oneOf("--fence", fence, List.of("on", "off"));
        oneOf("--fence-reads", fenceReads, List.of("on", "off"));
        if (clients < 1) {
            throw invalid("Invalid value for option '--clients': " + clients + " (must be at least 1)");
        }
        if (resources < 1 || resources > Resources.MAX) {
            throw invalid("Invalid value for option '--resources': " + resources + " (must be 1 to " + Resources.MAX
                    + ")");
        }
        if (maxSleepMillis < 0) {
            throw invalid("Invalid value for option '--max-sleep': " + maxSleepMillis + " (must be 0 or more)");
        }
        Duration limit = duration("--time-limit", timeLimit, false);
        Duration idle = duration("--compact-idle", compactIdle, true);
        databaseUrl("--postgresql-url", postgresqlUrl, DatabaseKind.POSTGRESQL);
        databaseUrl("--mariadb-url", mariadbUrl, DatabaseKind.MARIADB);
        PrintWriter stdout = spec.commandLine().getOut();
        if (nemesis.contains("kill-backend") && !store.equals("postgresql")) {
            spec.commandLine().getErr().println("fencing-verify: --nemesis kill-backend is implemented for the "
                    + "postgresql store only (MariaDB 10.11 shows no client-set session name without "
                    + "performance_schema)");
            return 3;
        }
        List<String> unsupported = nemesis.stream().filter(n -> !RUNNABLE_NEMESES.contains(n)).toList();
        if (!Runner.WORKLOADS.contains(workload) || !Runner.ISSUERS.contains(issuer)
                || !Runner.STORES.contains(store)
                || !unsupported.isEmpty()) {
            spec.commandLine().getErr().println("fencing-verify: running this workload is not implemented yet ("
                    + workload + ", issuer " + issuer + ", store " + store + ", nemesis " + String.join(",", nemesis)
                    + ", " + clients + " clients, " + limit.toSeconds() + " s, fence " + fence
                    + "); what runs: --workload " + String.join("|", Runner.WORKLOADS) + " --issuer "
                    + String.join("|", Runner.ISSUERS) + " --store " + String.join("|", Runner.STORES)
                    + " --nemesis " + String.join(",", RUNNABLE_NEMESES));
            return 3;
        }
        String note = checkAtCommitNote(workload, fence.equals("on"), checkAtCommit);
        if (note != null) {
            spec.commandLine().getErr().println("fencing-verify: note: " + note);
        }
        RunConfig config = RunConfig.lockSet(nemesis, clients, limit, fence.equals("on"))
                .withFenceReads(fenceReads.equals("on")).withIssuer(issuer).withStore(store)
                .withDatabaseUrls(postgresqlUrl, mariadbUrl).withWorkload(workload).withResources(resources)
                .withMaxSleep(Duration.ofMillis(maxSleepMillis)).withCheckAtCommit(checkAtCommit)
                .withCompactIdle(idle);
        if (out != null) {
            config = config.withOutDir(out);
        }
        RunResult run;
        try {
            run = new Runner(config, stdout).run();
        } catch (SQLException e) {
            spec.commandLine().getErr().println("fencing-verify: database error: " + e.getMessage());
            return 5;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            spec.commandLine().getErr().println("fencing-verify: interrupted; processes stopped, tables dropped");
            return 5;
        }
        CheckResult result = run.result();
        Map<String, Integer> byKind = new TreeMap<>();
        result.anomalies().forEach(a -> byKind.merge(a.kind().label(), 1, Integer::sum));
        WindowStats all = result.availability().all();
        stdout.printf("%s: %d anomalies %s in %d events; operations ok %d, fail %d, info %d; %d client processes, "
                        + "%d nemesis strikes, %.1f s; reports in %s%n", result.verdict().label(),
                result.anomalies().size(), byKind, result.events(), all.ok(), all.fail(), all.info(),
                run.processesStarted(), run.nemesisStrikes(), run.duration().toMillis() / 1000.0, run.dir());
        return exitCode(result);
    }

    /**
     * What a run checking at commit should expect, or null: the lock-set and counter workloads read and then write,
     * and a check deferred to COMMIT no longer orders that read, so lost writes are the documented outcome.
     */
    static String checkAtCommitNote(String workload, boolean fenced, boolean atCommit) {
        if (!atCommit || !fenced || workload.equals("append")) {
            return null;
        }
        return "--check-at-commit defers the read's check to COMMIT, so a fenced read no longer orders the "
                + workload + " workload's read-modify-write: lost writes are expected (docs/stores.md, checking at "
                + "commit); append is the workload the mode is for";
    }

    private static int exitCode(CheckResult result) {
        return switch (result.verdict()) {
            case VALID -> 0;
            case INVALID -> 1;
            case UNKNOWN -> 4;
        };
    }

    private int check() throws IOException {
        if (!Files.isRegularFile(check)) {
            throw invalid("Invalid value for option '--check': no such file " + check);
        }
        History history;
        try {
            history = HistoryReader.read(check);
        } catch (IllegalArgumentException e) {
            throw invalid("Invalid value for option '--check': " + check + ": " + e.getMessage());
        } catch (CharacterCodingException e) {
            throw invalid("Invalid value for option '--check': " + check + ": not UTF-8 text");
        } catch (IOException e) {
            throw invalid("Invalid value for option '--check': " + check + ": cannot be read: " + e.getMessage());
        }
        CheckResult result = Checker.standard().check(history);
        Path dir = out != null ? out : check.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Map<String, Object> run = new LinkedHashMap<>();
        run.put("history", check.toString());
        SummaryJson.write(result, run, dir.resolve("summary.json"));
        MarkdownSummary.write(result, run, dir.resolve("summary.md"));
        PrintWriter stdout = spec.commandLine().getOut();
        RunPlots.writeAndLink(history, result, dir, dir.resolve("summary.md"), spec.commandLine().getErr());
        stdout.println(result.verdict().label() + ": " + result.anomalies().size() + " anomalies in "
                + result.events() + " events; reports in " + dir);
        return exitCode(result);
    }

    private void oneOf(String option, String value, List<String> allowed) {
        if (!allowed.contains(value)) {
            throw invalid("Invalid value for option '" + option + "': '" + value + "' (expected one of "
                    + String.join(", ", allowed) + ")");
        }
    }

    private void databaseUrl(String option, String url, DatabaseKind kind) {
        DatabaseKind given;
        try {
            given = DatabaseKind.ofUrl(url);
        } catch (IllegalArgumentException e) {
            throw invalid("Invalid value for option '" + option + "': " + e.getMessage());
        }
        if (given != kind) {
            throw invalid("Invalid value for option '" + option + "': '" + url + "' is a " + given.label()
                    + " URL, expected " + kind.label() + " (jdbc:" + kind.label() + "://host:port/database)");
        }
    }

    private Duration duration(String option, String text, boolean zeroAllowed) {
        Matcher m = DURATION.matcher(text);
        if (!m.matches()) {
            throw invalid("Invalid value for option '" + option + "': '" + text + "' (a number with ms, s, m or h)");
        }
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        Duration limit = switch (unit) {
            case "ms" -> Duration.ofMillis(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofSeconds(n);
        };
        if (limit.isZero() && !zeroAllowed) {
            throw invalid("Invalid value for option '" + option + "': '" + text + "' (must be positive)");
        }
        return limit;
    }

    private ParameterException invalid(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
