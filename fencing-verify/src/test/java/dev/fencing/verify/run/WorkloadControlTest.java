package dev.fencing.verify.run;

import dev.fencing.verify.checker.AnomalyKind;
import dev.fencing.verify.checker.CheckReport;
import dev.fencing.verify.checker.CheckResult;
import dev.fencing.verify.checker.Verdict;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The control for the counter and append workloads, short version (what CI runs): the JDBC lease with PostgreSQL
 * as the store, 8 client processes, the pause and kill nemeses, 20 s each. The counter runs over two resources,
 * judged apart. With the fence the checker must find nothing; with the lock alone it must find lost increments
 * (counter) and a zombie's append with a lower token committed after a higher one (append). Each run leaves no
 * process and no table behind.
 */
class WorkloadControlTest {

    private static final Duration TIME_LIMIT = Duration.ofSeconds(20);

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void counterWithTheFenceLosesNoIncrement() throws Exception {
        RunResult run = run("counter", 2, true);
        assertValid(run);
        assertThat(run.result().checks()).anyMatch(c -> c.check().equals("counter") && c.status() == CheckReport.Status.CHECKED);
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
        assertThat(run.result().checks()).anyMatch(c -> c.check().equals("token-order") && c.status() == CheckReport.Status.CHECKED);
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void appendWithTheLockAloneCommitsAStaleWrite() throws Exception {
        RunResult run = run("append", 1, false);
        assertThat(run.result().verdict()).as("verdict of %s", run.dir()).isEqualTo(Verdict.INVALID);
        assertThat(run.result().anomalies()).anyMatch(a -> a.kind() == AnomalyKind.STALE_WRITE_APPLIED);
    }

    private static void assertValid(RunResult run) {
        CheckResult result = run.result();
        assertThat(result.anomalies()).as("anomalies in %s", run.dir()).isEmpty();
        assertThat(result.verdict()).isEqualTo(Verdict.VALID);
        assertThat(result.availability().all().ok()).as("operations acknowledged").isGreaterThan(50);
    }

    private static RunResult run(String workload, int resources, boolean fence) throws Exception {
        RunConfig config = RunConfig.lockSet(List.of("pause", "kill"), 8, TIME_LIMIT, fence).withWorkload(workload)
                .withResources(resources);
        PrintWriter log = new PrintWriter(System.out, true);
        RunResult run = new Runner(config, log).run();
        log.printf("%s: %s, %d anomalies, ok %d, fail %d, info %d, %d processes, %d strikes, %.1f s%n", run.name(),
                run.result().verdict().label(), run.result().anomalies().size(), run.result().availability().all().ok(),
                run.result().availability().all().fail(), run.result().availability().all().info(),
                run.processesStarted(), run.nemesisStrikes(), run.duration().toMillis() / 1000.0);
        assertThat(run.dir().resolve("summary.json")).exists();
        assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive).count())
                .as("child processes left").isZero();
        assertThat(Leftovers.tables(config.jdbcUrl(), run.tablePrefix())).as("tables left").isZero();
        return run;
    }
}
