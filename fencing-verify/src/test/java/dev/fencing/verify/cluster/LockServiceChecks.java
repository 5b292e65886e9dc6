package dev.fencing.verify.cluster;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** What the lock-service tests share: a run directory, an acquisition, and the check that nothing is left. */
final class LockServiceChecks {

    private LockServiceChecks() {
    }

    /** {@code target/verify/<test>-<random>}, as a run of the harness would have. */
    static Path runDir(String test) {
        return Paths.get("target", "verify", test + "-" + UUID.randomUUID().toString().substring(0, 8))
                .toAbsolutePath();
    }

    /** Acquires and releases the resource, returning the token it was granted. */
    static long token(TokenIssuer issuer, String resource) {
        try (Lease lease = issuer.acquire(resource, Duration.ofSeconds(30))) {
            assertThat(lease.isHeld()).isTrue();
            return lease.token().value();
        }
    }

    /** Polls up to 30 s for a leader other than the given member (null: any) and returns it. */
    static String awaitLeader(LockService service, String notThis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            String leader = service.leader();
            if (leader != null && !leader.equals(notThis)) {
                return leader;
            }
            Thread.sleep(200);
        }
        throw new AssertionError(service.name() + ": no leader other than " + notThis + " within 30 s");
    }

    /**
     * No process the service ever started is alive or a child of this JVM, and nothing listens on its ports (a
     * killed process's sockets close with it; the wait covers the kernel's cleanup).
     */
    static void assertNothingLeft(LockService service, List<Long> pids, List<Integer> ports)
            throws InterruptedException {
        assertThat(pids).isNotEmpty();
        for (long pid : pids) {
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                    .as("process %d of %s is gone", pid, service.name()).isFalse();
        }
        assertThat(ProcessHandle.current().children().map(ProcessHandle::pid).filter(pids::contains).toList())
                .as("children of this JVM started by %s", service.name()).isEmpty();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        List<Integer> listening = ports.stream().filter(Ports::listening).toList();
        while (!listening.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(100);
            listening = ports.stream().filter(Ports::listening).toList();
        }
        assertThat(listening).as("ports of %s still listening", service.name()).isEmpty();
        assertThat(ShutdownHooks.open()).doesNotContain(service);
        for (String member : service.members()) {
            assertThat(service.isRunning(member)).isFalse();
            assertThat(service.pid(member)).isEqualTo(-1);
        }
        deleteRun(service.directory().getParent()); // passed: its data is of no more use (etcd's is 120 MB a member)
    }

    /** Deletes a test's run directory; a failed test keeps its own, for reading. */
    static void deleteRun(Path run) {
        assertThat(run.toString()).contains("verify");
        try (Stream<Path> files = Files.walk(run)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
