package dev.fencing.verify.run;

import dev.fencing.verify.checker.AnomalyKind;
import dev.fencing.verify.checker.CheckReport;
import dev.fencing.verify.checker.CheckResult;
import dev.fencing.verify.checker.Verdict;
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
 * The control for the counter and append workloads, short version (what CI runs): the JDBC lease with PostgreSQL
 * as the store, 8 client processes, the pause and kill nemeses, 20 s each (append with up to 100 ms between its
 * acquisition and its insert, the window the pause aims at). The counter runs over two resources,
 * judged apart. With the fence the checker must find nothing; with the lock alone it must find lost increments
 * (counter) and a zombie's append with a lower token committed after a higher one (append). Each run leaves no
 * process and no table behind.
 */
@Execution(ExecutionMode.CONCURRENT)   // two runs at a time (ControlSlots): see junit-platform.properties
class WorkloadControlTest {

    private static final Duration TIME_LIMIT = Duration.ofSeconds(20);
    private static final Duration APPEND_MAX_SLEEP = Duration.ofMillis(100);

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void counterWithTheFenceLosesNoIncrement() throws Exception {
        RunResult run = run("counter", 2, true);
        assertValid(run);
        assertThat(run.result().checks())
                .anyMatch(c -> c.check().equals("counter") && c.status() == CheckReport.Status.CHECKED);
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void counterWithTheLockAloneLosesIncrements() throws Exception {
        RunResult run = run("counter", 2, false);
        assertThat(run.result().verdict()).as("verdict of %s", run.dir()).isEqualTo(Verdict.INVALID);
        assertThat(run.result().anomalies()).anyMatch(a -> a.kind() == AnomalyKind.COUNTER_OUT_OF_RANGE
                && a.description().contains("acknowledged increments lost"));
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void appendWithTheFenceCommitsInTokenOrder() throws Exception {
        RunResult run = run("append", 1, true);
        assertValid(run);
        assertThat(run.result().checks())
                .anyMatch(c -> c.check().equals("token-order") && c.status() == CheckReport.Status.CHECKED);
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void appendWithTheLockAloneCommitsAStaleWrite() throws Exception {
        RunResult run = run("append", 1, false);
        assertThat(run.result().verdict()).as("verdict of %s", run.dir()).isEqualTo(Verdict.INVALID);
        assertThat(run.result().anomalies()).anyMatch(a -> a.kind() == AnomalyKind.STALE_WRITE_APPLIED);
    }

    /**
     * The store features added after the long runs, in one short run: the clients' store checks at commit and is
     * built compacted, while the compact nemesis folds the fence rows idle for 100 ms into their family floor
     * (the JDBC lease's own floors raised first) between pauses and kills. Appends must still commit in token order.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void appendCheckedAtCommitUnderCompactionCommitsInTokenOrder() throws Exception {
        RunConfig base = RunConfig.lockSet(List.of("pause", "kill", "compact"), 8, TIME_LIMIT, true)
                .withWorkload("append").withCheckAtCommit(true).withCompactIdle(Duration.ofMillis(100));
        RunResult run = run(new RunConfig(base.workload(), base.issuer(), base.store(), base.nemeses(),
                base.clients(), base.timeLimit(), true, base.outRoot(), null, base.jdbcUrl(), base.user(),
                base.lease(), base.pauseMin(), base.pauseMax(), base.intervalMin(), base.intervalMax(),
                APPEND_MAX_SLEEP, base.seed(), base.fenceReads(), base.mariadbUrl(), 2, true, base.compactIdle()));
        assertValid(run);
        assertThat(run.result().checks())
                .anyMatch(c -> c.check().equals("token-order") && c.status() == CheckReport.Status.CHECKED);
        String summary = Files.readString(run.dir().resolve("summary.json"));
        assertThat(summary).as("the compact nemesis struck (compacted, or refused by a held table lock)")
                .containsPattern("\"compactions(-refused)?\" ?: ?[1-9]");
    }

    private static void assertValid(RunResult run) {
        CheckResult result = run.result();
        assertThat(result.anomalies()).as("anomalies in %s", run.dir()).isEmpty();
        assertThat(result.verdict()).isEqualTo(Verdict.VALID);
        // acquisitions and writes; with the fence on, a paused holder keeps the fence row locked and the others wait
        // (a 20 s counter run on this loaded 2-core machine acknowledged as few as 34)
        assertThat(result.availability().all().ok()).as("operations acknowledged").isGreaterThan(20);
    }

    private static RunResult run(String workload, int resources, boolean fence) throws Exception {
        RunConfig base = RunConfig.lockSet(List.of("pause", "kill"), 8, TIME_LIMIT, fence).withWorkload(workload)
                .withResources(resources);
        // append has no read: its pause window is the sleep before the insert alone, so it gets a longer one; a
        // pause that lands after the insert (signals are late on a loaded machine) makes no zombie in seq order
        Duration maxSleep = workload.equals("append") ? APPEND_MAX_SLEEP : base.maxSleep();
        RunConfig config = new RunConfig(base.workload(), base.issuer(), base.store(), base.nemeses(), base.clients(),
                base.timeLimit(), fence, base.outRoot(), null, base.jdbcUrl(), base.user(), base.lease(),
                base.pauseMin(), base.pauseMax(), base.intervalMin(), base.intervalMax(), maxSleep, base.seed(),
                base.fenceReads(), base.mariadbUrl(), resources,
                base.checkAtCommit(), base.compactIdle());
        return run(config);
    }

    private static RunResult run(RunConfig config) throws Exception {
        PrintWriter log = new PrintWriter(System.out, true);
        RunResult run = ControlSlots.run(() -> new Runner(config, log).run());
        log.printf("%s: %s, %d anomalies, ok %d, fail %d, info %d, %d processes, %d strikes, %.1f s%n", run.name(),
                run.result().verdict().label(), run.result().anomalies().size(), run.result().availability().all().ok(),
                run.result().availability().all().fail(), run.result().availability().all().info(),
                run.processesStarted(), run.nemesisStrikes(), run.duration().toMillis() / 1000.0);
        assertThat(run.dir().resolve("summary.json")).exists();
        // this run's processes (clients, lock-service members) name its directory: other runs go on beside it
        String runName = run.dir().getFileName().toString();
        assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)
                .filter(p -> p.info().commandLine().orElse("").contains(runName)).count())
                .as("processes of %s left", runName).isZero();
        assertThat(Leftovers.tables(config.jdbcUrl(), run.tablePrefix())).as("tables left").isZero();
        return run;
    }
}
