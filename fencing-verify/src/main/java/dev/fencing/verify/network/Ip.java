package dev.fencing.verify.network;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs iproute2's {@code ip} with a bounded wait. A command that fails (non-zero exit, timeout, no {@code ip} on the
 * path) throws {@link NetworkException} naming the command line, its exit code and what it printed on stderr.
 */
final class Ip {

    private static final long TIMEOUT_SECONDS = 10;

    private Ip() {
    }

    /** Runs {@code ip args...} and returns its standard output. */
    static String run(String... args) {
        List<String> command = new ArrayList<>();
        command.add("ip");
        command.addAll(List.of(args));
        String line = String.join(" ", command);
        Process p;
        try {
            p = new ProcessBuilder(command).start();
        } catch (IOException e) {
            throw new NetworkException("cannot run '" + line + "' (is iproute2 installed?): " + e.getMessage(), e);
        }
        // a thread of its own for each stream: on Java 25 (not 17) a 2-core machine's common pool runs both on its one
        // worker, and a reader queued behind the other (or anyone's blocked task) lets the command block on a full pipe
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()), Ip::reader);
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()), Ip::reader);
        boolean interrupted = false;
        try {
            boolean done;
            while (true) {
                try {
                    done = p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS);
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;        // finish the command: cleanup must not be cut short
                }
            }
            if (!done) {
                p.destroyForcibly();
                throw new NetworkException("'" + line + "' did not finish within " + TIMEOUT_SECONDS + " s");
            }
            if (p.exitValue() != 0) {
                throw new NetworkException("'" + line + "' failed with exit code " + p.exitValue() + ": "
                        + err.join().strip());
            }
            return out.join();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Like {@link #run} but a failure is returned (null when it worked) instead of thrown: for cleanup. */
    static NetworkException quietly(String... args) {
        try {
            run(args);
            return null;
        } catch (NetworkException e) {
            return e;
        }
    }

    private static void reader(Runnable read) {
        Thread thread = new Thread(read, "ip-output");
        thread.setDaemon(true);
        thread.start();
    }

    private static String read(InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
