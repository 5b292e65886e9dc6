package dev.fencing.verify.workload;

import dev.fencing.verify.client.ClientMain;
import dev.fencing.verify.client.CounterService;
import dev.fencing.verify.history.HistoryWriter;
import dev.fencing.verify.history.Op;
import dev.fencing.verify.history.OpType;

import java.sql.SQLException;

/**
 * What the runner reads from the store once every client has stopped, recorded in the history as process 0: for
 * lock-set and counter, a {@code read} of every resource (operation index = the resource's row), whose value is the
 * set or the counter; for append, the log in sequence order as commit rows. A read that fails is recorded as a
 * {@code fail} with the database's message (the checker then cannot judge that resource).
 */
public final class FinalReads {

    private FinalReads() {
    }

    /** Records the final state of {@code workload} over {@code resources} resources. */
    public static void record(String workload, int resources, LockSetTables tables, HistoryWriter history) {
        switch (workload) {
            case "lock-set" -> {
                for (int row = 0; row < resources; row++) {
                    int r = row;
                    read(history, row, Resources.name(ClientMain.RESOURCE, row, resources), () -> tables.readSet(r));
                }
            }
            case "counter" -> {
                for (int row = 0; row < resources; row++) {
                    int r = row;
                    read(history, row, Resources.name(CounterService.RESOURCE, row, resources),
                            () -> tables.readCounter(r));
                }
            }
            case "append" -> {
                try {
                    tables.readAppends().forEach(history::write);
                } catch (SQLException e) {
                    throw new IllegalStateException("cannot read the append log " + tables.append() + ": "
                            + e.getMessage(), e);
                }
            }
            default -> throw new IllegalArgumentException("unknown workload '" + workload + "'");
        }
    }

    /** A read of the store that may fail. */
    @FunctionalInterface
    private interface Read {
        Object get() throws SQLException;
    }

    private static void read(HistoryWriter history, int index, String resource, Read read) {
        history.write(new Op(OpType.INVOKE, 0, index, "read", resource, null, null, null, System.currentTimeMillis(),
                System.nanoTime()));
        try {
            Object value = read.get();
            history.write(new Op(OpType.OK, 0, index, "read", resource, null, value, null,
                    System.currentTimeMillis(), System.nanoTime()));
        } catch (SQLException e) {
            history.write(new Op(OpType.FAIL, 0, index, "read", resource, null, null, e.getMessage(),
                    System.currentTimeMillis(), System.nanoTime()));
        }
    }
}
