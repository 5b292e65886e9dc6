package dev.fencing.verify.run;

import dev.fencing.verify.client.ClientMain;
import dev.fencing.verify.client.ClientSettings;
import dev.fencing.verify.nemesis.Target;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A client JVM: {@link ClientMain} started with this JVM's class path and flags that keep its start cheap. A thread
 * reads its standard output ({@code ready}, {@code in}, {@code write}, {@code out}); its standard error goes to a log
 * file; closing its standard input tells it to stop after the operation in flight.
 */
final class ClientProcess implements Target {

    /** Flags of every client JVM: a quick start and a small footprint, 8 or more of them on 2 cores. */
    static final List<String> JVM_FLAGS = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m",
            "-Xss512k", "-XX:-UsePerfData", "-Xshare:auto");

    private final ClientSettings settings;
    private final Process process;
    private final Signals signals;
    private final CountDownLatch ready = new CountDownLatch(1);
    private volatile boolean inCriticalSection;
    private volatile boolean paused;

    private ClientProcess(ClientSettings settings, Process process, Signals signals) {
        this.settings = settings;
        this.process = process;
        this.signals = signals;
    }

    static ClientProcess start(ClientSettings settings, Path log, Signals signals) throws IOException {
        return start(settings, log, signals, List.of());
    }

    /** The same, the command line run after {@code prefix} (e.g. {@code ip netns exec <namespace>}). */
    static ClientProcess start(ClientSettings settings, Path log, Signals signals, List<String> prefix)
            throws IOException {
        List<String> command = new ArrayList<>(prefix);
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(JVM_FLAGS);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(ClientMain.class.getName());
        command.addAll(List.of(settings.toArgs()));
        Process process = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .directory(new File(System.getProperty("user.dir")))
                .start();
        ClientProcess client = new ClientProcess(settings, process, signals);
        Thread reader = new Thread(client::readOutput, "client-" + settings.process() + "-stdout");
        reader.setDaemon(true);
        reader.start();
        return client;
    }

    private void readOutput() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                switch (line) {
                    case "ready" -> ready.countDown();
                    case "in" -> inCriticalSection = true;
                    case "write", "out" -> inCriticalSection = false;
                    default -> { }
                }
            }
        } catch (IOException ignored) {
            // the process is gone
        } finally {
            inCriticalSection = false;
        }
    }

    int processNumber() {
        return settings.process();
    }

    ClientSettings settings() {
        return settings;
    }

    long pid() {
        return process.pid();
    }

    /** Waits until the client said it is ready; false on timeout or when it died first. */
    boolean awaitReady(long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (System.nanoTime() - deadline < 0) {
            if (ready.await(100, TimeUnit.MILLISECONDS)) {
                return true;
            }
            if (!process.isAlive()) {
                return false;
            }
        }
        return false;
    }

    @Override
    public String name() {
        return "client-" + settings.process();
    }

    @Override
    public boolean inCriticalSection() {
        return inCriticalSection && !paused && process.isAlive();
    }

    @Override
    public boolean isAlive() {
        return process.isAlive();
    }

    @Override
    public void pause() {
        paused = true;
        signals.send("STOP", process.pid());
    }

    @Override
    public void resume() {
        signals.send("CONT", process.pid());
        paused = false;
    }

    boolean paused() {
        return paused;
    }

    /** SIGKILL, and waits up to 10 s for the process to be gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** Asks the client to stop after its operation in flight: closes its standard input. */
    void requestStop() {
        if (paused) {
            resume();
        }
        try {
            OutputStream in = process.getOutputStream();
            in.close();
        } catch (IOException ignored) {
            // already closed or gone
        }
    }

    /**
     * Makes sure the process is gone: continues it if paused, closes its input, waits up to {@code graceMillis},
     * then SIGTERM and SIGKILL with bounded waits. Never throws; keeps an interrupt.
     */
    void destroy(long graceMillis) {
        boolean interrupted = Thread.interrupted();
        try {
            if (!process.isAlive()) {
                return;
            }
            signals.send("CONT", process.pid());
            paused = false;
            requestStop();
            if (waitFor(graceMillis)) {
                return;
            }
            process.destroy();
            if (waitFor(2_000)) {
                return;
            }
            process.destroyForcibly();
            waitFor(5_000);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private boolean waitFor(long millis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (process.isAlive() && System.nanoTime() - deadline < 0) {
            try {
                process.waitFor(50, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                // destroying must finish: keep waiting, the caller restores the interrupt
            }
        }
        return !process.isAlive();
    }
}
