package dev.fencing.verify.run;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * Sends SIGSTOP and SIGCONT to processes through one long-lived {@code /bin/sh}, whose {@code kill} is a builtin:
 * a signal goes out in well under a millisecond, where starting a {@code kill} process per signal takes several on a
 * loaded machine, long enough for a client to leave the critical section the pause nemesis aims at. Each call waits
 * for the shell's answer, so the signal has been sent when it returns.
 */
final class Signals implements AutoCloseable {

    private final Process shell;
    private final Writer in;
    private final BufferedReader out;

    Signals() {
        try {
            shell = new ProcessBuilder("/bin/sh").redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start /bin/sh for signals", e);
        }
        in = new java.io.OutputStreamWriter(shell.getOutputStream(), StandardCharsets.US_ASCII);
        out = new BufferedReader(new InputStreamReader(shell.getInputStream(), StandardCharsets.US_ASCII));
        send("0", ProcessHandle.current().pid());     // signal 0 checks only: the shell is up before the first pause
    }

    /** Sends {@code signal} (STOP, CONT) to {@code pid}; false when the process is gone. */
    synchronized boolean send(String signal, long pid) {
        try {
            in.write("kill -" + signal + " " + pid + " 2>/dev/null && echo ok || echo gone\n");
            in.flush();
            String answer = out.readLine();
            return "ok".equals(answer);
        } catch (IOException e) {
            return fallback(signal, pid);
        }
    }

    private static boolean fallback(String signal, long pid) {
        try {
            Process p = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
            return p.waitFor(5, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public synchronized void close() {
        try {
            in.close();
        } catch (IOException ignored) {
            // the shell is going anyway
        }
        try {
            if (!shell.waitFor(2, TimeUnit.SECONDS)) {
                shell.destroyForcibly().waitFor(2, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            shell.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
