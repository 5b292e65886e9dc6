package dev.fencing.it.boot;

import dev.fencing.it.boot.app.ProofApplication;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A second instance of {@link ProofApplication} in a JVM of its own: {@code java -cp <this JVM's class path>} with
 * the same properties as program arguments. Its output goes to a log file under {@code target/}; it is ready when it
 * prints its port. {@link #close()} ends it within a bounded time, and it ends itself when this JVM goes away (its
 * standard input closes: {@code -Dproof.exit-on-stdin-eof=true}).
 */
final class ProofProcess implements AutoCloseable {

    private static final long START_TIMEOUT_SECONDS = 90;

    private final Process process;
    private final Path log;
    private final int port;

    private ProofProcess(Process process, Path log, int port) {
        this.process = process;
        this.log = log;
        this.port = port;
    }

    static ProofProcess start(String name, List<String> properties) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command = new ArrayList<>(List.of(java, "-Xmx512m", "-XX:TieredStopAtLevel=1",
                "-Dproof.exit-on-stdin-eof=true", "-cp", System.getProperty("java.class.path"),
                ProofApplication.class.getName()));
        properties.forEach(property -> command.add("--" + property));
        Path log = Path.of("target", "proof-" + name + ".log").toAbsolutePath();
        Files.createDirectories(log.getParent());
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        CompletableFuture<Integer> port = new CompletableFuture<>();
        Thread reader = new Thread(() -> pump(process, log, port), "proof-process-" + name);
        reader.setDaemon(true);
        reader.start();
        try {
            return new ProofProcess(process, log, port.get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS));
        } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
            stop(process);
            throw new IllegalStateException("The second instance did not print its port within "
                    + START_TIMEOUT_SECONDS + " s (exit " + (process.isAlive() ? "none" : process.exitValue())
                    + "); its output, " + log + ":\n" + tail(log), e);
        } catch (InterruptedException e) {
            stop(process);
            throw e;
        }
    }

    private static void pump(Process process, Path log, CompletableFuture<Integer> port) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8));
             PrintWriter out = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8), true)) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                out.println(line);
                if (line.startsWith(ProofApplication.PORT_LINE)) {
                    port.complete(Integer.parseInt(line.substring(ProofApplication.PORT_LINE.length()).trim()));
                }
            }
        } catch (IOException | RuntimeException e) {
            port.completeExceptionally(e);
        }
        port.completeExceptionally(new IllegalStateException("the second instance's output ended"));
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    int port() {
        return port;
    }

    Path log() {
        return log;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** Ends the instance: its standard input closes (it closes its context and exits), else SIGTERM, else SIGKILL. */
    @Override
    public void close() throws InterruptedException {
        stop(process);
    }

    private static void stop(Process process) throws InterruptedException {
        try {
            process.getOutputStream().close();
        } catch (IOException ignored) {
            // gone already
        }
        if (process.waitFor(20, TimeUnit.SECONDS)) {
            return;
        }
        process.destroy();
        if (process.waitFor(10, TimeUnit.SECONDS)) {
            return;
        }
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the second instance (pid " + process.pid() + ") did not end");
        }
    }
}
