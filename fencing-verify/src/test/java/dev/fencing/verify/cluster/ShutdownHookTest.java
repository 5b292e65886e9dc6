package dev.fencing.verify.cluster;

import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** A harness JVM stopped with SIGTERM (Ctrl-C is the same for the hooks) kills its lock service on the way out. */
class ShutdownHookTest {

    /** The stand-in harness: starts an etcd cluster, prints its pids, then waits to be stopped. */
    public static void main(String[] args) throws Exception {
        EtcdCluster etcd = new EtcdCluster(Paths.get(args[0]));
        etcd.start();
        System.out.println("pids " + etcd.launchedPids().toString().replaceAll("[\\[\\] ]", ""));
        System.out.println("ports " + etcd.ports().toString().replaceAll("[\\[\\] ]", ""));
        System.out.flush();
        Thread.sleep(TimeUnit.MINUTES.toMillis(2)); // never closed here: only the hook can stop the members
    }

    @Test
    void aHarnessStoppedWithSigtermLeavesNoMemberRunning() throws Exception {
        Path run = LockServiceChecks.runDir("hook");
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        Process harness = new ProcessBuilder(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), ShutdownHookTest.class.getName(), run.toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        List<Long> pids = new ArrayList<>();
        List<Integer> ports = new ArrayList<>();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(harness.getInputStream(),
                    StandardCharsets.UTF_8));
            String line;
            while ((line = out.readLine()) != null) {
                if (line.startsWith("pids ")) {
                    for (String pid : line.substring(5).split(",")) {
                        pids.add(Long.parseLong(pid));
                    }
                } else if (line.startsWith("ports ")) {
                    for (String port : line.substring(6).split(",")) {
                        ports.add(Integer.parseInt(port));
                    }
                    break;
                }
            }
            assertThat(pids).as("the harness started the cluster").hasSize(3);
            assertThat(pids).allMatch(pid -> ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));

            harness.destroy(); // SIGTERM
            assertThat(harness.waitFor(30, TimeUnit.SECONDS)).isTrue();
        } finally {
            harness.destroyForcibly();
            for (long pid : pids) { // should the hook have failed, do not leave them to the next test
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
        for (long pid : pids) {
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                    .as("etcd member %d after the harness stopped", pid).isFalse();
        }
        assertThat(ports).hasSize(6).noneMatch(Ports::listening);
        LockServiceChecks.deleteRun(run);
    }
}
