package dev.fencing.verify.run;

import dev.fencing.verify.checker.AnomalyKind;
import dev.fencing.verify.checker.CheckResult;
import dev.fencing.verify.checker.Verdict;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The control, short version (what CI runs): the lock-set workload on the JDBC lease with PostgreSQL as the store,
 * 8 client processes, the pause and kill nemeses. With the fence the checker must find nothing; without it (the lock
 * alone) it must find the lost writes a paused lock holder causes. A harness that cannot see the anomaly proves
 * nothing. Each run leaves no process and no table behind.
 */
class LockSetControlTest {

    private static final Duration TIME_LIMIT = Duration.ofSeconds(30);

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void withTheFenceNoAcknowledgedWriteIsLost() throws Exception {
        RunResult run = run(true, "jdbc-postgresql");
        CheckResult result = run.result();
        assertThat(result.anomalies()).as("anomalies in %s", run.dir()).isEmpty();
        assertThat(result.verdict()).isEqualTo(Verdict.VALID);
        assertThat(result.availability().all().ok()).as("operations acknowledged").isGreaterThan(50);
        assertThat(run.nemesisStrikes()).isPositive();
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void withTheLockAloneAPausedHolderLosesAcknowledgedWrites() throws Exception {
        RunResult run = run(false, "jdbc-postgresql");
        CheckResult result = run.result();
        assertThat(result.verdict()).as("verdict of %s", run.dir()).isEqualTo(Verdict.INVALID);
        assertThat(result.anomalies()).as("lost writes in %s", run.dir())
                .anyMatch(a -> a.kind() == AnomalyKind.LOST_WRITE);
    }

    /** ZooKeeper: a 3-server ensemble of separate processes; a paused holder's session expires and its lock goes. */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void onZooKeeperWithTheFenceNoAcknowledgedWriteIsLost() throws Exception {
        RunResult run = run(true, "zookeeper");
        assertThat(run.result().anomalies()).as("anomalies in %s", run.dir()).isEmpty();
        assertThat(run.result().verdict()).isEqualTo(Verdict.VALID);
        assertThat(run.result().availability().all().ok()).as("operations acknowledged").isGreaterThan(50);
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void onZooKeeperWithTheLockAloneAPausedHolderLosesAcknowledgedWrites() throws Exception {
        RunResult run = run(false, "zookeeper");
        assertThat(run.result().verdict()).as("verdict of %s", run.dir()).isEqualTo(Verdict.INVALID);
        assertThat(run.result().anomalies()).anyMatch(a -> a.kind() == AnomalyKind.LOST_WRITE);
    }

    private static RunResult run(boolean fence, String issuer) throws Exception {
        RunConfig config = RunConfig.lockSet(List.of("pause", "kill"), 8, TIME_LIMIT, fence).withIssuer(issuer);
        PrintWriter log = new PrintWriter(System.out, true);
        RunResult run = new Runner(config, log).run();
        log.printf("%s: %s, %d anomalies, ok %d, fail %d, info %d, %d processes, %d strikes, %.1f s%n", run.name(),
                run.result().verdict().label(), run.result().anomalies().size(), run.result().availability().all().ok(),
                run.result().availability().all().fail(), run.result().availability().all().info(),
                run.processesStarted(), run.nemesisStrikes(), run.duration().toMillis() / 1000.0);
        assertThat(run.dir().resolve("history.jsonl")).exists();
        assertThat(Files.readString(run.dir().resolve("summary.json"))).contains("\"verdict\"");
        assertThat(run.dir().resolve("summary.md")).exists();
        assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive).count())
                .as("child processes left").isZero();
        assertThat(tablesLeft(config.jdbcUrl(), run.tablePrefix())).as("tables left").isZero();
        return run;
    }

    static int tablesLeft(String url, String prefix) throws Exception {
        try (Connection c = DriverManager.getConnection(url, "postgres", "");
             PreparedStatement p = c.prepareStatement("SELECT count(*) FROM pg_tables WHERE tablename LIKE ?")) {
            p.setString(1, prefix + "\\_%");
            try (ResultSet r = p.executeQuery()) {
                r.next();
                return r.getInt(1);
            }
        }
    }
}
