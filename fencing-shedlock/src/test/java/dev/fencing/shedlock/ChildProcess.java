package dev.fencing.shedlock;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A JVM running a main class of the test class path: its stdout read by a thread of its own, so a test waits for a
 * line with a deadline instead of blocking; {@link #close()} kills and reaps it.
 */
final class ChildProcess implements AutoCloseable {

    private final String name;
    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> seen = new ArrayList<>();

    ChildProcess(String name, Class<?> main, String... args) throws IOException {
        this.name = name;
        List<String> command = new ArrayList<>();
        command.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main.getName());
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.redirectError(ProcessBuilder.Redirect.INHERIT);
        process = builder.start();
        Thread pump = new Thread(this::pump, "stdout of " + name);
        pump.setDaemon(true);
        pump.start();
    }

    private void pump() {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                lines.add(line);
            }
        } catch (IOException ended) {
            // the process is gone; what it printed is in the queue
        }
    }

    /** Waits for the next line starting with {@code prefix} and returns it; fails at the deadline, with what came. */
    String expect(String prefix, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new AssertionError(name + " printed no line starting with '" + prefix + "' within " + within
                        + "; it printed " + seen
                        + (process.isAlive() ? "" : " and exited with " + process.exitValue()));
            }
            seen.add(line);
            if (line.startsWith(prefix)) {
                return line;
            }
        }
    }

    void send(String line) throws IOException {
        Writer in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        in.write(line + "\n");
        in.flush();
    }

    /** Waits for a normal exit; whether it came within {@code within}. */
    boolean exited(Duration within) throws InterruptedException {
        return process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }
}
