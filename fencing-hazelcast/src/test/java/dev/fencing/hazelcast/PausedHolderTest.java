package dev.fencing.hazelcast;

import dev.fencing.issuer.Lease;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The zombie, for real: the holder is a Hazelcast client in a JVM of its own ({@link PausedHolder}), stopped with
 * SIGSTOP, so it sends no CP session heartbeat until the CP group expires its session and hands the lock to the next
 * holder; then SIGCONT, and its write, made after the next holder's, reaches the resource. The same sequence of writes
 * goes to a register without the fence, where the stale write lands, and to one behind a fence store, which refuses
 * it. The woken holder learns its lease was lost, and its release is quiet.
 */
class PausedHolderTest {

    private static final Duration DEADLINE = Duration.ofSeconds(40);

    @Test
    @Timeout(100)
    void aPausedHoldersWriteLandsWithoutTheFenceAndIsRefusedWithIt() throws Throwable {
        CpGroup group = CpGroup.shared();
        String r = "paused-" + UUID.randomUUID();
        Process holder = start(group, r);
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = reader(holder, lines);
        PrintWriter commands = new PrintWriter(holder.getOutputStream(), true, StandardCharsets.UTF_8);
        try (HazelcastTokenIssuer issuer = new HazelcastTokenIssuer(group.members.get(0), "paused/",
                Duration.ofMillis(200), null)) {
            FencingToken zombieToken = FencingToken.parse(next(lines, "HELD "));

            Map<String, String> unfenced = new HashMap<>();          // the resource without the fence
            Map<String, String> fenced = new HashMap<>();            // the resource behind a fence store
            InMemoryFenceStore store = new InMemoryFenceStore();

            long stoppedAt = System.nanoTime(); // before the signal: the holder is frozen before kill returns
            signal("STOP", holder.pid());
            try (Lease next = issuer.acquire(r, Duration.ofSeconds(30))) {
                long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt);
                // the session expires a TTL after the last heartbeat (every second, later on a loaded machine), not
                // after the pause: at least half the TTL tells a wait for the expiry from a lock passed on at once
                assertThat(waitedMs).as("the lock passed on only when the paused holder's session expired")
                        .isGreaterThanOrEqualTo(TimeUnit.SECONDS.toMillis(CpGroup.SESSION_TTL_SECONDS) / 2);
                assertThat(next.token().value()).isGreaterThan(zombieToken.value());
                unfenced.put(r, "X");
                store.fence(r, next.token(), () -> fenced.put(r, "X"));

                signal("CONT", holder.pid());
                commands.println("write");                           // the zombie wakes and writes Y
                FencingToken presented = FencingToken.parse(next(lines, "WRITE "));
                assertThat(presented).isEqualTo(zombieToken);

                unfenced.put(r, "Y");
                assertThat(unfenced.get(r)).as("without the fence the stale write lands").isEqualTo("Y");
                assertThatThrownBy(() -> store.fence(r, presented, () -> fenced.put(r, "Y")))
                        .isInstanceOf(StaleTokenException.class);
                assertThat(fenced.get(r)).as("with the fence it is refused").isEqualTo("X");

                awaitLost(commands, lines);
                commands.println("close");
                assertThat(next(lines, "")).as("the lost lease closes quietly").isEqualTo("CLOSED");
                assertThat(next.isHeld()).isTrue();
            }
            commands.println("exit");
            assertThat(holder.waitFor(20, TimeUnit.SECONDS)).isTrue();
        } finally {
            signal("CONT", holder.pid());
            holder.destroyForcibly();
            reader.interrupt();
        }
    }

    private static Process start(CpGroup group, String resource) throws Exception {
        String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
        File log = new File("target/paused-holder-" + resource + ".log");
        return new ProcessBuilder(java, "-XX:TieredStopAtLevel=1", "-Xshare:auto",
                "-cp", System.getProperty("java.class.path"), PausedHolder.class.getName(),
                group.clusterName, String.join(",", group.addresses()), resource)
                .redirectError(log).start();
    }

    private static Thread reader(Process process, BlockingQueue<String> lines) {
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = out.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (Exception ignored) {
                // the process ended
            }
        }, "paused-holder-reader");
        reader.setDaemon(true);
        reader.start();
        return reader;
    }

    /** The next line of the holder, without {@code prefix}, within the deadline. */
    private static String next(BlockingQueue<String> lines, String prefix) throws InterruptedException {
        String line = lines.poll(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(line).as("a line from the holder within " + DEADLINE).isNotNull().startsWith(prefix);
        return line.substring(prefix.length());
    }

    private static void awaitLost(PrintWriter commands, BlockingQueue<String> lines) throws InterruptedException {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (true) {
            commands.println("lost");
            if (Boolean.parseBoolean(next(lines, "LOST "))) {
                return;
            }
            assertThat(System.nanoTime()).as("the woken holder reports its lease lost").isLessThan(deadline);
            Thread.sleep(100);
        }
    }

    private static void signal(String signal, long pid) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    }
}
