package dev.fencing.verify.run;

import dev.fencing.verify.checker.AnomalyKind;
import dev.fencing.verify.checker.CheckResult;
import dev.fencing.verify.checker.Verdict;
import dev.fencing.verify.database.TablesLeft;
import dev.fencing.verify.history.HistoryReader;
import dev.fencing.verify.history.OpType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.Timeout;

import java.io.PrintWriter;
import java.nio.file.Files;
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
@Execution(ExecutionMode.CONCURRENT)   // two runs at a time (ControlSlots): see junit-platform.properties
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
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void withTheLockAloneAPausedHolderLosesAcknowledgedWrites() throws Exception {
        RunResult run = unfencedUntilInvalid("jdbc-postgresql");
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
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void onZooKeeperWithTheLockAloneAPausedHolderLosesAcknowledgedWrites() throws Exception {
        RunResult run = unfencedUntilInvalid("zookeeper");
        assertThat(run.result().verdict()).as("verdict of %s", run.dir()).isEqualTo(Verdict.INVALID);
        assertThat(run.result().anomalies()).anyMatch(a -> a.kind() == AnomalyKind.LOST_WRITE);
    }

    /**
     * etcd: a 3-member cluster of separate processes; a paused holder's session lease (2 s, etcd's minimum) runs out
     * and its lock key goes. With the fence, each 4-5 s pause stalls the resource (the paused holder keeps the fence
     * row locked), so fewer operations get through than on the 1 s issuers.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void onEtcdWithTheFenceNoAcknowledgedWriteIsLost() throws Exception {
        RunResult run = run(true, "etcd");
        assertThat(run.result().anomalies()).as("anomalies in %s", run.dir()).isEmpty();
        assertThat(run.result().verdict()).isEqualTo(Verdict.VALID);
        assertThat(acknowledgedAdds(run)).as("adds acknowledged in %s", run.dir()).isGreaterThanOrEqualTo(5);
        assertThat(run.dir().resolve("etcd").resolve("1").resolve("pid")).as("pid of a stopped member").doesNotExist();
        deleteEtcdData(run);
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void onEtcdWithTheLockAloneAPausedHolderLosesAcknowledgedWrites() throws Exception {
        RunResult run = unfencedUntilInvalid("etcd");
        assertThat(run.result().verdict()).as("verdict of %s", run.dir()).isEqualTo(Verdict.INVALID);
        assertThat(run.result().anomalies()).anyMatch(a -> a.kind() == AnomalyKind.LOST_WRITE);
        deleteEtcdData(run);
    }

    /**
     * A control run without the fence, repeated once when it finds nothing: the control shows that the faults can
     * lose acknowledged writes, and on a loaded machine one run may acknowledge too few writes (a handful) for a
     * pause to land on one. A second valid run fails the test.
     */
    private static RunResult unfencedUntilInvalid(String issuer) throws Exception {
        RunResult first = run(false, issuer);
        if (first.result().verdict() == Verdict.INVALID) {
            return first;
        }
        if (issuer.equals("etcd")) {
            deleteEtcdData(first);
        }
        return run(false, issuer);
    }

    /** The members' data (some 120 MB each, preallocated write-ahead logs); the history and reports stay. */
    private static void deleteEtcdData(RunResult run) throws Exception {
        try (var paths = Files.walk(run.dir().resolve("etcd"))) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private static long acknowledgedAdds(RunResult run) throws Exception {
        return HistoryReader.read(run.dir().resolve("history.jsonl")).ops().stream()
                .filter(op -> op.type() == OpType.OK && op.f().equals("add")).count();
    }

    private static RunResult run(boolean fence, String issuer) throws Exception {
        return run(fence, issuer, "postgresql", TIME_LIMIT);
    }

    private static RunResult run(boolean fence, String issuer, String store, Duration timeLimit) throws Exception {
        RunConfig config = RunConfig.lockSet(List.of("pause", "kill"), 8, timeLimit, fence).withIssuer(issuer)
                .withStore(store);
        PrintWriter log = new PrintWriter(System.out, true);
        RunResult run = ControlSlots.run(() -> new Runner(config, log).run());
        log.printf("%s: %s, %d anomalies, ok %d, fail %d, info %d, %d processes, %d strikes, %.1f s%n", run.name(),
                run.result().verdict().label(), run.result().anomalies().size(), run.result().availability().all().ok(),
                run.result().availability().all().fail(), run.result().availability().all().info(),
                run.processesStarted(), run.nemesisStrikes(), run.duration().toMillis() / 1000.0);
        assertThat(run.dir().resolve("history.jsonl")).exists();
        assertThat(Files.readString(run.dir().resolve("summary.json"))).contains("\"verdict\"");
        assertThat(run.dir().resolve("summary.md")).exists();
        // this run's processes (clients, lock-service members) name its directory: other runs go on beside it
        String runName = run.dir().getFileName().toString();
        assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)
                .filter(p -> p.info().commandLine().orElse("").contains(runName)).count())
                .as("processes of %s left", runName).isZero();
        assertThat(TablesLeft.count(config.storeDatabase(), run.tablePrefix())).as("tables left").isZero();
        if (config.leaseDatabase() != null) {
            assertThat(TablesLeft.count(config.leaseDatabase(), run.tablePrefix())).as("lease table left").isZero();
        }
        return run;
    }
}
