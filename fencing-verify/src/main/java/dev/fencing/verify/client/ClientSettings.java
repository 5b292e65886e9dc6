package dev.fencing.verify.client;

import dev.fencing.verify.workload.Resources;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * What one client process is told on its command line ({@code --name value} pairs): its process number, where its
 * history goes, the database and the run's tables, the lease, and whether the set row is fenced.
 *
 * @param process       the client's process number in the history (a replacement gets a new one)
 * @param history       the client's own history file
 * @param jdbcUrl       the database of the store, the lease and the set
 * @param user          the database user
 * @param fenceTable    the run's fence table (max_seen)
 * @param leaseTable    the run's lease table
 * @param setTable      the run's table of the workload (the set rows, the counter rows or the append log)
 * @param lease         the lease time of the JDBC issuer
 * @param fence         whether the set row is read and written through the fence
 * @param maxSleep      the longest random pause between the read and the write
 * @param seed          the random seed of this client
 * @param fenceReads    with the fence on: whether the read of the set is fenced too (else only the write)
 * @param issuer        the token issuer: {@code jdbc-postgresql}, {@code jdbc-mariadb} (the lease table),
 *                      {@code zookeeper} or {@code etcd}
 * @param issuerAddress the lock service's client address (the ZooKeeper connect string, the etcd endpoints), or the
 *                      JDBC URL of the lease's database; empty for a JDBC lease on the store's database
 * @param workload      the workload: {@code lock-set}, {@code counter} or {@code append}
 * @param resources     how many resources the operations pick from (rows 0 to resources - 1)
 * @param checkAtCommit whether the JDBC store checks at commit ({@code checkAtCommit(true)}, PostgreSQL only)
 * @param compacted     whether the JDBC store is built {@code compacted(true)} (the compact nemesis folds its table)
 */
public record ClientSettings(int process, Path history, String jdbcUrl, String user, String fenceTable,
                             String leaseTable, String setTable, Duration lease,
                             boolean fence, Duration maxSleep, long seed,
                             boolean fenceReads, String issuer, String issuerAddress,
                             String workload, int resources, boolean checkAtCommit, boolean compacted) {

    /** The arguments that make {@link #parse} give back these settings. */
    public String[] toArgs() {
        return new String[]{"--process", Integer.toString(process), "--history", history.toString(),
                "--jdbc-url", jdbcUrl, "--user", user, "--fence-table", fenceTable, "--lease-table", leaseTable,
                "--set-table", setTable, "--lease-ms", Long.toString(lease.toMillis()),
                "--fence", fence ? "on" : "off",
                "--max-sleep-ms", Long.toString(maxSleep.toMillis()), "--seed", Long.toString(seed),
                "--fence-reads", fenceReads ? "on" : "off", "--issuer", issuer,
                "--issuer-address", issuerAddress.isEmpty() ? "-" : issuerAddress,
                "--workload", workload, "--resources", Integer.toString(resources),
                "--check-at-commit", checkAtCommit ? "on" : "off", "--compacted", compacted ? "on" : "off"};
    }

    /** The settings in {@code args}, as {@link #toArgs()} writes them. */
    public static ClientSettings parse(String... args) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --name value pairs, got " + args[i]);
            }
            m.put(args[i].substring(2), args[i + 1]);
        }
        if (args.length % 2 != 0) {
            throw new IllegalArgumentException("expected --name value pairs, " + args[args.length - 1] + " has none");
        }
        return new ClientSettings(Integer.parseInt(req(m, "process")), Path.of(req(m, "history")),
                req(m, "jdbc-url"), m.getOrDefault("user", "postgres"), req(m, "fence-table"), req(m, "lease-table"),
                req(m, "set-table"), Duration.ofMillis(Long.parseLong(m.getOrDefault("lease-ms", "1000"))),
                !"off".equals(m.getOrDefault("fence", "on")),
                Duration.ofMillis(Long.parseLong(m.getOrDefault("max-sleep-ms", "30"))),
                Long.parseLong(m.getOrDefault("seed", "0")), !"off".equals(m.getOrDefault("fence-reads", "on")),
                m.getOrDefault("issuer", "jdbc-postgresql"),
                "-".equals(m.getOrDefault("issuer-address", "-")) ? "" : m.get("issuer-address"),
                m.getOrDefault("workload", "lock-set"),
                Resources.check(Integer.parseInt(m.getOrDefault("resources", "1"))),
                "on".equals(m.getOrDefault("check-at-commit", "off")), "on".equals(m.getOrDefault("compacted", "off")));
    }

    private static String req(Map<String, String> m, String name) {
        String v = m.get(name);
        if (v == null) {
            throw new IllegalArgumentException("missing --" + name);
        }
        return v;
    }
}
