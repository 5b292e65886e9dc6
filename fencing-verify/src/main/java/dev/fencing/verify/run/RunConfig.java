package dev.fencing.verify.run;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The parameters of one run. {@link #lockSet} gives the defaults of the lock-set workload on the JDBC lease.
 *
 * @param workload      the workload (lock-set)
 * @param issuer        the token issuer (jdbc-postgresql)
 * @param store         the fence store's database (postgresql)
 * @param nemeses       the enabled nemeses (pause, kill; none or empty for no faults)
 * @param clients       how many client processes run at once
 * @param timeLimit     how long the workload runs once every client is ready
 * @param fence         whether the set row is read and written through the fence
 * @param outRoot       where run directories go ({@code target/verify}), unless {@code outDir} is set
 * @param outDir        this run's directory, or null for {@code outRoot/<run>}
 * @param jdbcUrl       the PostgreSQL database
 * @param user          its user
 * @param lease         the JDBC lease time
 * @param pauseMin      the shortest pause of the pause nemesis
 * @param pauseMax      the longest
 * @param intervalMin   the shortest wait between two nemesis strikes
 * @param intervalMax   the longest
 * @param maxSleep      the longest pause of a client between its read and its write
 * @param seed          the seed of the nemesis schedule and the run's name
 * @param fenceReads    with the fence on: whether the clients' read of the set is fenced too (default) or only
 *                      their write
 */
public record RunConfig(String workload, String issuer, String store, List<String> nemeses, int clients,
                        Duration timeLimit, boolean fence, Path outRoot, Path outDir, String jdbcUrl, String user,
                        Duration lease, Duration pauseMin, Duration pauseMax, Duration intervalMin,
                        Duration intervalMax, Duration maxSleep, long seed, boolean fenceReads) {

    /** The PostgreSQL the test suite uses: 127.0.0.1:5432, database test, user postgres, trust auth. */
    public static final String DEFAULT_JDBC_URL = "jdbc:postgresql://127.0.0.1:5432/test";

    public RunConfig {
        Objects.requireNonNull(workload, "workload");
        nemeses = List.copyOf(nemeses);
        if (clients < 1) {
            throw new IllegalArgumentException("clients must be at least 1");
        }
    }

    /** The lock-set workload on the JDBC lease and the PostgreSQL store, with a 1 s lease and 2–3 s pauses. */
    public static RunConfig lockSet(List<String> nemeses, int clients, Duration timeLimit, boolean fence) {
        return new RunConfig("lock-set", "jdbc-postgresql", "postgresql", nemeses, clients, timeLimit, fence,
                Path.of("target", "verify"), null, DEFAULT_JDBC_URL, "postgres", Duration.ofSeconds(1),
                Duration.ofMillis(2_000), Duration.ofMillis(3_000), Duration.ofSeconds(1), Duration.ofSeconds(3),
                Duration.ofMillis(30), System.nanoTime(), true);
    }

    /** The same run writing into {@code dir}. */
    public RunConfig withOutDir(Path dir) {
        return new RunConfig(workload, issuer, store, nemeses, clients, timeLimit, fence, outRoot, dir, jdbcUrl, user,
                lease, pauseMin, pauseMax, intervalMin, intervalMax, maxSleep, seed, fenceReads);
    }

    /** The same run with its tokens from {@code issuer}: {@code jdbc-postgresql} or {@code zookeeper}. */
    public RunConfig withIssuer(String issuer) {
        return new RunConfig(workload, issuer, store, nemeses, clients, timeLimit, fence, outRoot, outDir, jdbcUrl,
                user, lease, pauseMin, pauseMax, intervalMin, intervalMax, maxSleep, seed, fenceReads);
    }

    /** The same run with the read of the set fenced or not. */
    public RunConfig withFenceReads(boolean fenced) {
        return new RunConfig(workload, issuer, store, nemeses, clients, timeLimit, fence, outRoot, outDir, jdbcUrl,
                user, lease, pauseMin, pauseMax, intervalMin, intervalMax, maxSleep, seed, fenced);
    }

    /** The same run with clients pausing up to {@code sleep} between their read and their write. */
    public RunConfig withMaxSleep(Duration sleep) {
        return new RunConfig(workload, issuer, store, nemeses, clients, timeLimit, fence, outRoot, outDir, jdbcUrl,
                user, lease, pauseMin, pauseMax, intervalMin, intervalMax, sleep, seed, fenceReads);
    }

    /** The parameters as the summary's {@code run} object shows them. */
    public Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("workload", workload);
        m.put("issuer", issuer);
        m.put("store", store);
        m.put("nemesis", String.join(",", nemeses));
        m.put("clients", clients);
        m.put("time-limit-s", timeLimit.toMillis() / 1000.0);
        m.put("fence", fence ? "on" : "off");
        if (fence) {
            m.put("fenced", fenceReads ? "read and write" : "write only");
        }
        m.put("lease-ms", lease.toMillis());
        m.put("pause-ms", pauseMin.toMillis() + "-" + pauseMax.toMillis());
        m.put("nemesis-interval-ms", intervalMin.toMillis() + "-" + intervalMax.toMillis());
        m.put("max-sleep-ms", maxSleep.toMillis());
        m.put("seed", seed);
        return m;
    }
}
