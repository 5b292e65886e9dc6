package dev.fencing.verify.run;

import dev.fencing.verify.Main;
import dev.fencing.verify.network.Namespaces;
import dev.fencing.verify.workload.LockSetTables;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A run with the partition nemesis leaves no namespace and no veth behind when it is interrupted (a client cut off
 * at that moment), and what a runner killed with SIGKILL left is removed by the sweep the next run starts with.
 */
@Isolated   // it counts every child process of this JVM: no run of a concurrent class may go on beside it
class PartitionCleanupTest {

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void anInterruptedRunLeavesNoNamespaceAndNoVeth(@TempDir Path dir) throws Exception {
        RunConfig base = RunConfig.lockSet(List.of("partition"), 2, Duration.ofMinutes(5), false);
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
        }, r -> new Thread(r, "interrupted-partition-run").start());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!text.toString().contains("clients ready") && System.nanoTime() - deadline < 0) {
            Thread.sleep(100);
        }
        String mine = "fv-" + ProcessHandle.current().pid() + "-";
        try {
            assertThat(text.toString()).contains("clients ready");
            assertThat(Namespaces.list().stream().filter(n -> n.startsWith(mine))).as("namespaces during the run")
                    .hasSize(2);
            // the partition nemesis cuts a client now and then, and heals it: wait until one is cut (a fixed pause
            // of two seconds missed it on a loaded machine)
            long cutBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (Namespaces.open().stream().noneMatch(n -> n.isCut()) && System.nanoTime() - cutBy < 0) {
                Thread.sleep(20);
            }
            assertThat(Namespaces.open()).anyMatch(n -> n.isCut());
        } finally {
            runner.get().interrupt(); // also when an assertion above failed: no client may outlive this test
        }

        assertThatThrownBy(() -> run.get(60, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasRootCauseInstanceOf(InterruptedException.class);
        assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive).count())
                .as("child processes left").isZero();
        assertThat(Namespaces.list()).as("namespaces left").noneMatch(n -> n.startsWith(mine));
        assertThat(Namespaces.links()).as("veth links left")
                .noneMatch(l -> l.startsWith("fv" + ProcessHandle.current().pid() + "h"));
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void whatARunnerKilledWithSigkillLeftIsSweptAway(@TempDir Path dir) throws Exception {
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), Main.class.getName(),
                "--workload", "lock-set", "--issuer", "jdbc-postgresql", "--nemesis", "partition", "--clients", "2",
                "--time-limit", "5m", "--fence", "off", "--out", dir.toString());
        Process runner = new ProcessBuilder(command).redirectErrorStream(true).start();
        String prefix = null;
        String namespaces = "fv-" + runner.pid() + "-";
        List<ProcessHandle> clients;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(runner.getInputStream(),
                StandardCharsets.UTF_8))) {
            Pattern tables = Pattern.compile(".*tables (verify_[0-9a-f]+)_\\*.*");
            String line;
            while ((line = out.readLine()) != null && !line.contains("clients ready")) {
                Matcher m = tables.matcher(line);
                if (m.matches()) {
                    prefix = m.group(1);
                }
            }
            assertThat(line).as("the runner's output up to 'clients ready'").isNotNull();
            assertThat(Namespaces.list().stream().filter(n -> n.startsWith(namespaces))).hasSize(2);
            clients = runner.descendants().toList();
            runner.destroyForcibly();
            assertThat(runner.waitFor(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            runner.destroyForcibly();
        }
        // the clients see their standard input close and stop on their own
        for (ProcessHandle c : clients) {
            c.onExit().get(30, TimeUnit.SECONDS);
        }
        assertThat(Namespaces.list()).as("what the killed runner left").anyMatch(n -> n.startsWith(namespaces));
        try {
            assertThat(Namespaces.sweep()).isGreaterThanOrEqualTo(2);
            assertThat(Namespaces.list()).as("namespaces left").noneMatch(n -> n.startsWith(namespaces));
            assertThat(Namespaces.links()).as("veth links left")
                    .noneMatch(l -> l.startsWith("fv" + runner.pid() + "h"));
        } finally {
            if (prefix != null) {
                new LockSetTables(RunConfig.DEFAULT_JDBC_URL, "postgres", prefix).drop();
            }
        }
    }
}
