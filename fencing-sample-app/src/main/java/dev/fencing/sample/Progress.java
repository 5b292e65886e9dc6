package dev.fencing.sample;

import java.io.PrintStream;
import java.util.concurrent.TimeUnit;

/** Timestamped progress lines, so a user sees what happens while a zombie pauses. */
final class Progress {
    private final PrintStream out;
    private final long started = System.nanoTime();

    Progress(PrintStream out) {
        this.out = out;
    }

    void say(String strategy, String text) {
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        synchronized (out) {
            out.printf("[%6d ms] %-10s %s%n", millis, strategy, text);
        }
    }
}
