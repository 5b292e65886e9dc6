package dev.fencing.verify.run;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.api.Timeout;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A run interrupted in the middle (what a test timeout does), while a client is paused, stops every client process
 * and drops its tables before the interrupt reaches the caller.
 */
@Isolated   // it counts every child process of this JVM: no run of a concurrent class may go on beside it
class InterruptedRunTest {

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void anInterruptedRunLeavesNoProcessAndNoTable(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        RunConfig base = RunConfig.lockSet(List.of("pause"), 2, Duration.ofMinutes(5), false);
        RunConfig config = new RunConfig(base.workload(), base.issuer(), base.store(), base.nemeses(), 2,
                base.timeLimit(), false, base.outRoot(), dir, base.jdbcUrl(), base.user(), base.lease(),
                Duration.ofSeconds(20), Duration.ofSeconds(20), Duration.ofMillis(200), Duration.ofMillis(200),
                base.maxSleep(), base.seed(), true, base.mariadbUrl(), base.resources(),
                base.checkAtCommit(), base.compactIdle());
        StringWriter text = new StringWriter();
        PrintWriter log = new PrintWriter(text, true);
        AtomicReference<Thread> runner = new AtomicReference<>();
        CompletableFuture<RunResult> run = CompletableFuture.supplyAsync(() -> {
            runner.set(Thread.currentThread());
            try {
                return new Runner(config, log).run();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, r -> new Thread(r, "interrupted-run").start());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!text.toString().contains("clients ready") && System.nanoTime() - deadline < 0) {
            Thread.sleep(100);
        }
        try {
            assertThat(text.toString()).contains("clients ready");
            Thread.sleep(2_000);                   // the pause nemesis has stopped a client by now
            long running = ProcessHandle.current().descendants().filter(p -> p.info().command().orElse("")
                    .endsWith("java")).count();
            assertThat(running).as("client processes running").isEqualTo(2);
        } finally {
            runner.get().interrupt(); // also when an assertion above failed: no client may outlive this test
        }
        assertThatThrownBy(() -> run.get(60, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasRootCauseInstanceOf(InterruptedException.class);
        assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive).count())
                .as("child processes left").isZero();
        String prefix = text.toString().replaceAll("(?s).*tables (verify_[0-9a-f]+)_\\*.*", "$1");
        try (Connection c = DriverManager.getConnection(config.jdbcUrl(), "postgres", "");
             PreparedStatement p = c.prepareStatement("SELECT count(*) FROM pg_tables WHERE tablename LIKE ?")) {
            p.setString(1, prefix + "\\_%");
            try (ResultSet r = p.executeQuery()) {
                r.next();
                assertThat(r.getInt(1)).as("tables of %s left", prefix).isZero();
            }
        }
    }
}
