package dev.fencing.verify.client;

import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.jdbc.FenceBusyException;
import dev.fencing.jdbc.FenceConflictException;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import dev.fencing.verify.history.HistoryWriter;
import dev.fencing.verify.history.Op;
import dev.fencing.verify.history.OpType;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.transaction.TransactionSystemException;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.List;

/**
 * One client of the lock-set workload, run by the runner as an OS process of its own. It builds a Spring context
 * ({@link ClientConfig}), prints {@code ready}, and runs operations one after another until its standard input
 * closes (the runner stops it, or the runner died): each is an {@code acquire} (recorded with the token granted)
 * followed by an {@code add} of a unique element ({@code process * 1_000_000 + n}) under that lock, every event
 * appended to the client's own history file. On standard output it says {@code in} when it has read the set,
 * {@code write} when it sends the write, and {@code out} when the operation is over, so that the runner's pause
 * nemesis can stop a client between its read and its write (where a pause makes a zombie).
 */
public final class ClientMain {

    /** The lock and store resource of the workload. */
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
            LockSetService service = context.getBean(LockSetService.class);
            say(out, "ready");
            long index = 0;
            long n = 0;
            while (!stop && n < ELEMENTS_PER_PROCESS - 1) {
                long element = settings.process() * ELEMENTS_PER_PROCESS + (++n);
                Operation op = new Operation(history, settings.process(), index, element, out);
                index += 2;
                op.run(service);
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

    /** One acquire + add, recording its events as they happen. */
    private static final class Operation implements LockSetService.Steps {
        private final HistoryWriter history;
        private final int process;
        private final long acquireIndex;
        private final long addIndex;
        private final long element;
        private final PrintStream out;
        private Long token;
        private boolean written;

        Operation(HistoryWriter history, int process, long index, long element, PrintStream out) {
            this.history = history;
            this.process = process;
            this.acquireIndex = index;
            this.addIndex = index + 1;
            this.element = element;
            this.out = out;
        }

        void run(LockSetService service) {
            history.write(event(OpType.INVOKE, acquireIndex, "acquire", null, null, null));
            try {
                service.add(element, this);
                history.write(event(OpType.OK, addIndex, "add", token, element, null));
            } catch (Throwable t) {
                if (t instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                if (token == null) {
                    boolean certain = find(t, LockAcquisitionException.class) != null;
                    history.write(event(certain ? OpType.FAIL : OpType.INFO, acquireIndex, "acquire", null, null,
                            reason(t)));
                } else {
                    // the transaction commits after the method returns: a failure before the write statement
                    // returned (a killed connection included) rolled it back; one after it may have committed
                    OpType type = rejected(t) || !written ? OpType.FAIL : OpType.INFO;
                    history.write(event(type, addIndex, "add", token, element, reason(t)));
                }
            }
        }

        @Override
        public void acquired(FencingToken granted) {
            token = granted.value();
            history.write(event(OpType.OK, acquireIndex, "acquire", token, null, null));
            history.write(event(OpType.INVOKE, addIndex, "add", token, element, null));
        }

        @Override
        public void read(List<Long> set) {
            say(out, "in");
        }

        @Override
        public void writing() {
            say(out, "write");
        }

        @Override
        public void written() {
            written = true;
        }

        private Op event(OpType type, long index, String f, Long token, Object value, String reason) {
            return new Op(type, process, index, f, RESOURCE, token, value, reason, System.currentTimeMillis(),
                    System.nanoTime());
        }
    }

    /** Whether the store refused the write: it certainly did not take effect. */
    private static boolean rejected(Throwable t) {
        return find(t, StaleTokenException.class) != null || find(t, DuplicateTokenException.class) != null
                || find(t, FenceBusyException.class) != null || find(t, FenceConflictException.class) != null;
    }

    private static String reason(Throwable t) {
        if (t instanceof TransactionSystemException e && e.getApplicationException() != null) {
            // the rollback failed too (a killed connection): name what failed first
            return reason(e.getApplicationException()) + " (rollback failed)";
        }
        String kind;
        if (find(t, StaleTokenException.class) != null) {
            kind = "stale";
        } else if (find(t, DuplicateTokenException.class) != null) {
            kind = "duplicate";
        } else if (find(t, FenceBusyException.class) != null) {
            kind = "busy";
        } else if (find(t, FenceConflictException.class) != null) {
            kind = "conflict";
        } else if (find(t, LockAcquisitionException.class) != null) {
            kind = "lock timeout";
        } else {
            kind = t.getClass().getSimpleName();
        }
        String message = String.valueOf(t.getMessage());
        if (message.length() > 200) {
            message = message.substring(0, 200) + "...";
        }
        return kind + ": " + message;
    }

    private static <T extends Throwable> T find(Throwable t, Class<T> type) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        return null;
    }
}
