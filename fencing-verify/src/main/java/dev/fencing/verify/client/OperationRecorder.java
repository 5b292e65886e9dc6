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
import org.springframework.transaction.TransactionSystemException;

import java.io.PrintStream;

/**
 * Records one operation of a client as it happens: {@code acquire} (invoke, then ok with the token granted), then
 * the workload's write ({@code add}, {@code increment}, {@code append}) under that token (invoke, then ok, fail
 * when it certainly did not apply, info when its outcome is unknown). It says {@code in} and {@code write} on the
 * client's standard output at the read and the write, for the pause nemesis. The acquisition has index
 * {@code index}, the write {@code index + 1}.
 */
final class OperationRecorder implements Steps {

    /** The body of an operation: runs it under the lock, reporting its steps; returns the value of its ok. */
    @FunctionalInterface
    interface Body {
        Object run(Steps steps) throws Exception;
    }

    private final HistoryWriter history;
    private final int process;
    private final long acquireIndex;
    private final String f;
    private final String resource;
    private final Object invokeValue;
    private final PrintStream out;
    private Long token;
    private boolean written;

    OperationRecorder(HistoryWriter history, int process, long index, String f, String resource, Object invokeValue,
                      PrintStream out) {
        this.history = history;
        this.process = process;
        this.acquireIndex = index;
        this.f = f;
        this.resource = resource;
        this.invokeValue = invokeValue;
        this.out = out;
    }

    void run(Body body) {
        history.write(event(OpType.INVOKE, acquireIndex, "acquire", null, null, null));
        try {
            Object value = body.run(this);
            history.write(event(OpType.OK, acquireIndex + 1, f, token, value, null));
        } catch (Throwable t) {
            if (t instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            if (token == null) {
                boolean certain = Failures.find(t, LockAcquisitionException.class) != null;
                history.write(event(certain ? OpType.FAIL : OpType.INFO, acquireIndex, "acquire", null, null,
                        Failures.reason(t)));
            } else {
                // the transaction commits after the method returns: a failure before the write statement
                // returned (a killed connection included) rolled it back; one after it may have committed
                OpType type = Failures.rejected(t) || !written ? OpType.FAIL : OpType.INFO;
                history.write(event(type, acquireIndex + 1, f, token, invokeValue, Failures.reason(t)));
            }
        }
    }

    @Override
    public void acquired(FencingToken granted) {
        token = granted.value();
        history.write(event(OpType.OK, acquireIndex, "acquire", token, null, null));
        history.write(event(OpType.INVOKE, acquireIndex + 1, f, token, invokeValue, null));
    }

    @Override
    public void read() {
        say("in");
    }

    @Override
    public void writing() {
        say("write");
    }

    @Override
    public void written() {
        written = true;
    }

    private void say(String line) {
        out.println(line);
        out.flush();
    }

    private Op event(OpType type, long index, String f, Long token, Object value, String reason) {
        return new Op(type, process, index, f, resource, token, value, reason, System.currentTimeMillis(),
                System.nanoTime());
    }

    /** What a failure says about the operation: whether the store refused it, and a short reason. */
    static final class Failures {

        private Failures() {
        }

        /** Whether the store refused the write: it certainly did not take effect. */
        static boolean rejected(Throwable t) {
            return find(t, StaleTokenException.class) != null || find(t, DuplicateTokenException.class) != null
                    || find(t, FenceBusyException.class) != null || find(t, FenceConflictException.class) != null;
        }

        static String reason(Throwable t) {
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

        static <T extends Throwable> T find(Throwable t, Class<T> type) {
            for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
                if (type.isInstance(c)) {
                    return type.cast(c);
                }
            }
            return null;
        }
    }
}
