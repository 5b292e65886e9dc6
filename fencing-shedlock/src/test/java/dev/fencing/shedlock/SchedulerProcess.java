package dev.fencing.shedlock;

import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * One scheduler instance in a process of its own, for {@link ProcessSchedulersTest}: starts a {@link SchedulerApp}
 * on the given tables, prints {@code STARTED token=N} when its job's first run has the lock (and the token, when
 * fenced), pauses until a line arrives on stdin when told to, writes, and prints {@code WROTE},
 * {@code REFUSED <exception> max_seen=N} ({@code lock lost}: refused by its own process) or {@code FAILED <exception>};
 * then it stops.
 *
 * <p>Arguments: fenced, the shedlock, lease, fence and data tables, the value to write, pause.
 */
public final class SchedulerProcess {

    private SchedulerProcess() {
    }

    public static void main(String[] args) throws Exception {
        boolean fenced = Boolean.parseBoolean(args[0]);
        SchedulerApp.Tables tables = new SchedulerApp.Tables(args[1], args[2], args[3], args[4]);
        boolean pause = Boolean.parseBoolean(args[6]);
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        JobControl control = new JobControl(args[5], pause ? () -> readLine(stdin) : () -> { });
        control.onStarted = () -> say("STARTED token=" + (control.token == null ? "none" : control.token.value()));
        try (SchedulerApp app = new SchedulerApp(tables, fenced, control)) {
            if (!control.done.await(60, TimeUnit.SECONDS)) {
                say("FAILED the job did not run within 60 s");
                return;
            }
            Throwable failure = control.failure;
            if (failure == null) {
                say("WROTE");
            } else if (failure instanceof TokenRejectedException rejected) {
                say("REFUSED " + failure.getClass().getSimpleName() + (failure instanceof StaleTokenException stale
                        && stale.lockLost() ? " lock lost" : " max_seen=" + rejected.maxSeen()));
            } else {
                say("FAILED " + failure);
            }
        }
    }

    private static void readLine(BufferedReader stdin) {
        try {
            stdin.readLine();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
