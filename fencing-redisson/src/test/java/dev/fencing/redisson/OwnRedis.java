package dev.fencing.redisson;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A {@code redis-server} of a test's own, on a free loopback port with a temporary directory, for what the shared
 * Redis on 6379 must not see (a kill, a restart, a pause, a configuration change). Started by {@link #start}, the
 * same command line again by {@link #restart()}; {@link #close()} kills it and removes its directory.
 */
final class OwnRedis implements AutoCloseable {

    final int port;
    final Path dir;
    private final List<String> command;
    private Process process;

    private OwnRedis(int port, Path dir, List<String> command) {
        this.port = port;
        this.dir = dir;
        this.command = command;
    }

    /** A server started with {@code options} after its port, its bind address and its directory. */
    static OwnRedis start(String name, String... options) throws Exception {
        int port = freePort();
        Path dir = Files.createTempDirectory("fencing-redis-" + name);
        List<String> command = new ArrayList<>(List.of("redis-server", "--port", String.valueOf(port), "--bind",
                "127.0.0.1", "--dir", dir.toString()));
        command.addAll(List.of(options));
        OwnRedis redis = new OwnRedis(port, dir, command);
        redis.restart();
        return redis;
    }

    static int freePort() throws IOException {
        try (ServerSocket free = new ServerSocket(0)) {
            return free.getLocalPort();
        }
    }

    /** Starts the server again with its command line (after {@link #kill()}), and waits until it accepts. */
    void restart() throws Exception {
        process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("redis.log").toFile())).start();
        for (int attempt = 0; ; attempt++) {
            try (Socket probe = new Socket("127.0.0.1", port)) {
                return;
            } catch (IOException notYet) {
                if (attempt > 100) {
                    throw notYet;
                }
                Thread.sleep(100);
            }
        }
    }

    /** Kills the server at once (SIGKILL): what it had not written to disk is gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }

    /** Sends {@code signal} ({@code STOP}, {@code CONT}) to the server. */
    void signal(String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
        }
    }

    /** What {@code redis-cli} prints for {@code args} against this server, trimmed. */
    String cli(String... args) throws Exception {
        List<String> cli = new ArrayList<>(List.of("redis-cli", "-p", String.valueOf(port)));
        cli.addAll(List.of(args));
        Process process = new ProcessBuilder(cli).redirectErrorStream(true).start();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("redis-cli " + args[0] + " did not answer within 20 s");
        }
        return new String(process.getInputStream().readAllBytes()).trim();
    }

    String address() {
        return "redis://127.0.0.1:" + port;
    }

    @Override
    public void close() throws Exception {
        if (process != null) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }
}
