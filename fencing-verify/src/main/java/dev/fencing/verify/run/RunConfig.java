package dev.fencing.verify.run;

import dev.fencing.verify.database.Database;
import dev.fencing.verify.database.DatabaseKind;
import dev.fencing.verify.workload.Resources;

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
 * @param mariadbUrl    the MariaDB database (its user from the URL's {@code user=}, else root), for
 *                      {@code --store mariadb} and {@code --issuer jdbc-mariadb}
 * @param resources     how many resources the operations pick from at random (1 to
 *                      {@link dev.fencing.verify.workload.Resources#MAX})
 * @param checkAtCommit whether the clients' JDBC store checks at commit ({@code checkAtCommit(true)}, PostgreSQL
 *                      only) instead of before each fenced call
 * @param compactIdle   the compact nemesis folds fence rows not advanced for this long
 */
public record RunConfig(String workload, String issuer, String store, List<String> nemeses, int clients,
                        Duration timeLimit, boolean fence, Path outRoot, Path outDir, String jdbcUrl, String user,
                        Duration lease, Duration pauseMin, Duration pauseMax, Duration intervalMin,
                        Duration intervalMax, Duration maxSleep, long seed, boolean fenceReads,
                        String mariadbUrl, int resources, boolean checkAtCommit,
                        Duration compactIdle) {

    /** The PostgreSQL the test suite uses: 127.0.0.1:5432, database test, user postgres, trust auth. */
    public static final String DEFAULT_JDBC_URL = Database.POSTGRESQL_TEST_URL;

    /** The MariaDB the test suite uses: 127.0.0.1:3306, database test, user root, no password. */
    public static final String DEFAULT_MARIADB_URL = Database.MARIADB_TEST_URL;

    /** How long a fence row must not have advanced before the compact nemesis folds it, unless told otherwise. */
    public static final Duration DEFAULT_COMPACT_IDLE = Duration.ofSeconds(1);

    public RunConfig {
        Objects.requireNonNull(workload, "workload");
        nemeses = List.copyOf(nemeses);
        mariadbUrl = mariadbUrl == null ? DEFAULT_MARIADB_URL : mariadbUrl;
        if (clients < 1) {
            throw new IllegalArgumentException("clients must be at least 1");
        }
        Resources.check(resources);
    }

    /** The lock-set workload on the JDBC lease and the PostgreSQL store, with a 1 s lease and 2–3 s pauses. */
    public static RunConfig lockSet(List<String> nemeses, int clients, Duration timeLimit, boolean fence) {
        return new RunConfig("lock-set", "jdbc-postgresql", "postgresql", nemeses, clients, timeLimit, fence,
                Path.of("target", "verify"), null, DEFAULT_JDBC_URL, "postgres", Duration.ofSeconds(1),
                Duration.ofMillis(2_000), Duration.ofMillis(3_000), Duration.ofSeconds(1), Duration.ofSeconds(3),
                Duration.ofMillis(30), System.nanoTime(), true, DEFAULT_MARIADB_URL, 1, false, DEFAULT_COMPACT_IDLE);
    }

    /** The same run writing into {@code dir}. */
    public RunConfig withOutDir(Path dir) {
        return new RunConfig(workload, issuer, store, nemeses, clients, timeLimit, fence, outRoot, dir, jdbcUrl, user,
                lease, pauseMin, pauseMax, intervalMin, intervalMax, maxSleep, seed, fenceReads, mariadbUrl,
                resources, checkAtCommit, compactIdle);
    }

    /**
     * The same run with its tokens from {@code issuer} ({@code jdbc-postgresql}, {@code jdbc-mariadb},
     * {@code zookeeper} or {@code etcd}), with that issuer's lease and pause lengths ({@link IssuerTiming}).
     */
    public RunConfig withIssuer(String issuer) {
        IssuerTiming timing = IssuerTiming.of(issuer);
        return new RunConfig(workload, issuer, store, nemeses, clients, timeLimit, fence, outRoot, outDir, jdbcUrl,
                user, timing.lease(), timing.pauseMin(), timing.pauseMax(), intervalMin, intervalMax, maxSleep, seed,
                fenceReads, mariadbUrl, resources, checkAtCommit, compactIdle);
    }

    /** The same run with the fence and set tables on {@code store}: {@code postgresql} or {@code mariadb}. */
    public RunConfig withStore(String store) {
        return new RunConfig(workload, issuer, store, nemeses, clients, timeLimit, fence, outRoot, outDir, jdbcUrl,
                user, lease, pauseMin, pauseMax, intervalMin, intervalMax, maxSleep, seed, fenceReads, mariadbUrl,
                resources, checkAtCommit, compactIdle);
    }

    /**
     * The same run on other database servers; a user given in a URL ({@code ?user=...}) replaces the default one.
     *
     * @throws IllegalArgumentException when a URL is not of its kind
     */
    public RunConfig withDatabaseUrls(String postgresqlUrl, String mariadbUrl) {
        Database pg = Database.of(postgresqlUrl);
        if (pg.kind() != DatabaseKind.POSTGRESQL || Database.of(mariadbUrl).kind() != DatabaseKind.MARIADB) {
            throw new IllegalArgumentException("expected a PostgreSQL and a MariaDB URL, got " + postgresqlUrl
                    + " and " + mariadbUrl);
        }
        return new RunConfig(workload, issuer, store, nemeses, clients, timeLimit, fence, outRoot, outDir, pg.url(),
                pg.user(), lease, pauseMin, pauseMax, intervalMin, intervalMax, maxSleep, seed, fenceReads,
                mariadbUrl, resources, checkAtCommit, compactIdle);
    }

    /** The database of the fence and set tables ({@link #store()}). */
    public Database storeDatabase() {
        return database(store);
    }

    /** The database of the JDBC lease ({@code jdbc-postgresql}, {@code jdbc-mariadb}), or null for another issuer. */
    public Database leaseDatabase() {
        return issuer.startsWith("jdbc-") ? database(issuer.substring("jdbc-".length())) : null;
    }

    private Database database(String label) {
        return switch (label) {
            case "postgresql" -> new Database(DatabaseKind.POSTGRESQL, jdbcUrl, user);
            case "mariadb" -> Database.of(mariadbUrl);
            default -> throw new IllegalArgumentException("no database named '" + label
                    + "' (expected postgresql or mariadb)");
        };
    }

    /** The same run with the read of the set fenced or not. */
    public RunConfig withFenceReads(boolean fenced) {
        return new RunConfig(workload, issuer, store, nemeses, clients, timeLimit, fence, outRoot, outDir, jdbcUrl,
                user, lease, pauseMin, pauseMax, intervalMin, intervalMax, maxSleep, seed, fenced, mariadbUrl,
                resources, checkAtCommit, compactIdle);
    }

    /** The same run with the workload {@code workload}: lock-set, counter or append. */
    public RunConfig withWorkload(String workload) {
        return new RunConfig(workload, issuer, store, nemeses, clients, timeLimit, fence, outRoot, outDir, jdbcUrl,
                user, lease, pauseMin, pauseMax, intervalMin, intervalMax, maxSleep, seed, fenceReads, mariadbUrl,
                resources, checkAtCommit, compactIdle);
    }

    /** The same run over {@code resources} resources. */
    public RunConfig withResources(int resources) {
        return new RunConfig(workload, issuer, store, nemeses, clients, timeLimit, fence, outRoot, outDir, jdbcUrl,
                user, lease, pauseMin, pauseMax, intervalMin, intervalMax, maxSleep, seed, fenceReads, mariadbUrl,
                resources, checkAtCommit, compactIdle);
    }

    /** The same run with clients pausing up to {@code sleep} between their read and their write. */
    public RunConfig withMaxSleep(Duration sleep) {
        return new RunConfig(workload, issuer, store, nemeses, clients, timeLimit, fence, outRoot, outDir, jdbcUrl,
                user, lease, pauseMin, pauseMax, intervalMin, intervalMax, sleep, seed, fenceReads, mariadbUrl,
                resources, checkAtCommit, compactIdle);
    }

    /** The same run with the clients' store checking at commit (PostgreSQL) or before each fenced call. */
    public RunConfig withCheckAtCommit(boolean atCommit) {
        return new RunConfig(workload, issuer, store, nemeses, clients, timeLimit, fence, outRoot, outDir, jdbcUrl,
                user, lease, pauseMin, pauseMax, intervalMin, intervalMax, maxSleep, seed, fenceReads, mariadbUrl,
                resources, atCommit, compactIdle);
    }

    /** The same run with the compact nemesis folding rows idle for {@code idle}. */
    public RunConfig withCompactIdle(Duration idle) {
        return new RunConfig(workload, issuer, store, nemeses, clients, timeLimit, fence, outRoot, outDir, jdbcUrl,
                user, lease, pauseMin, pauseMax, intervalMin, intervalMax, maxSleep, seed, fenceReads, mariadbUrl,
                resources, checkAtCommit, idle);
    }

    /** Whether the compact nemesis runs, so that the clients' store is built {@code compacted(true)}. */
    public boolean compacted() {
        return nemeses.contains("compact");
    }

    /** The parameters as the summary's {@code run} object shows them. */
    public Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("workload", workload);
        m.put("issuer", issuer);
        m.put("store", store);
        m.put("nemesis", String.join(",", nemeses));
        m.put("clients", clients);
        m.put("resources", resources);
        m.put("time-limit-s", timeLimit.toMillis() / 1000.0);
        m.put("fence", fence ? "on" : "off");
        if (fence) {
            m.put("fenced", fenceReads ? "read and write" : "write only");
            m.put("check", checkAtCommit ? "at commit" : "before the call");
        }
        m.put("lease-ms", lease.toMillis());
        Database leaseDb = leaseDatabase();
        m.put("databases", "store " + storeDatabase().url() + (leaseDb == null ? "" : ", lease " + leaseDb.url()));
        m.put("pause-ms", pauseMin.toMillis() + "-" + pauseMax.toMillis());
        m.put("nemesis-interval-ms", intervalMin.toMillis() + "-" + intervalMax.toMillis());
        m.put("max-sleep-ms", maxSleep.toMillis());
        if (compacted()) {
            m.put("compact-idle-ms", compactIdle.toMillis());
        }
        m.put("seed", seed);
        return m;
    }
}
