package dev.fencing.verify.client;

import dev.fencing.verify.history.HistoryWriter;
import dev.fencing.verify.workload.Resources;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.Random;

/**
 * One client of a workload, run by the runner as an OS process of its own. It builds a Spring context
 * ({@link ClientConfig} and the workload's own configuration), prints {@code ready}, and runs operations one after
 * another until its standard input closes (the runner stops it, or the runner died): each picks one of the run's
 * resources at random and is an {@code acquire} of its lock (recorded with the token granted) followed by the
 * workload's write under that lock ({@link WorkloadDriver}: an {@code add} of a unique element
 * {@code process * 1_000_000 + n}, an {@code increment}, an {@code append}), every event appended to the client's
 * own history file. On standard output it says {@code in} when it has read the data,
 * {@code write} when it sends the write, and {@code out} when the operation is over, so that the runner's pause
 * nemesis can stop a client between its read and its write (where a pause makes a zombie).
 */
public final class ClientMain {

    /** The lock-set workload's resource: its resource names' base and its {@code @Fenced} resource (key: the row). */
    public static final String RESOURCE = "set";

    /** Elements of one process are {@code process * ELEMENTS_PER_PROCESS + n}, n from 1. */
    public static final long ELEMENTS_PER_PROCESS = 1_000_000L;

    private ClientMain() {
    }

    public static void main(String[] args) throws Exception {
        ClientSettings settings = ClientSettings.parse(args);
        PrintStream out = System.out;
        Thread stdinWatch = new Thread(() -> {
            try {
                InputStream in = System.in;
                while (in.read() != -1) {
                    // nothing is sent; end of input is the stop signal
                }
            } catch (IOException ignored) {
                // a broken pipe is an end of input too
            }
            stop = true;
        }, "stdin-watch");
        stdinWatch.setDaemon(true);
        stdinWatch.start();

        try (HistoryWriter history = HistoryWriter.open(settings.history());
             AnnotationConfigApplicationContext context = ClientContext.start(settings)) {
            WorkloadDriver driver = context.getBean(WorkloadDriver.class);
            Random random = new Random(settings.seed());
            say(out, "ready");
            long index = 0;
            long n = 0;
            while (!stop && n < ELEMENTS_PER_PROCESS - 1) {
                long element = settings.process() * ELEMENTS_PER_PROCESS + (++n);
                int row = random.nextInt(settings.resources());
                long writeIndex = index + 1;
                OperationRecorder op = new OperationRecorder(history, settings.process(), index, driver.f(),
                        Resources.name(driver.base(), row, settings.resources()), driver.invokeValue(element), out);
                index += 2;
                op.run(steps -> driver.run(row, element, writeIndex, steps));
                say(out, "out");
            }
        }
        System.exit(0);
    }

    private static volatile boolean stop;

    private static void say(PrintStream out, String line) {
        out.println(line);
        out.flush();
    }
}
