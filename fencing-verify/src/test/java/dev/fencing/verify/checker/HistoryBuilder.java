package dev.fencing.verify.checker;

import dev.fencing.verify.history.CommitRow;
import dev.fencing.verify.history.History;
import dev.fencing.verify.history.HistoryEvent;
import dev.fencing.verify.history.NemesisEvent;
import dev.fencing.verify.history.Op;
import dev.fencing.verify.history.OpType;

import java.util.ArrayList;
import java.util.List;

/** Hand-written histories for the checks' tests: each event one clock tick (1 ms) after the one before. */
final class HistoryBuilder {

    private final List<HistoryEvent> events = new ArrayList<>();
    private long tick;

    HistoryBuilder invoke(int process, long index, String f, String resource, Object value) {
        return add(OpType.INVOKE, process, index, f, resource, null, value, null);
    }

    /** An invocation that records the token it runs under. */
    HistoryBuilder invoke(int process, long index, String f, String resource, Long token, Object value) {
        return add(OpType.INVOKE, process, index, f, resource, token, value, null);
    }

    HistoryBuilder ok(int process, long index, String f, String resource, Long token, Object value) {
        return add(OpType.OK, process, index, f, resource, token, value, null);
    }

    HistoryBuilder fail(int process, long index, String f, String resource, String reason) {
        return add(OpType.FAIL, process, index, f, resource, null, null, reason);
    }

    HistoryBuilder info(int process, long index, String f, String resource, String reason) {
        return add(OpType.INFO, process, index, f, resource, null, null, reason);
    }

    /** An invocation and its ok completion, back to back. */
    HistoryBuilder call(int process, long index, String f, String resource, Long token, Object value) {
        return invoke(process, index, f, resource, value).ok(process, index, f, resource, token, value);
    }

    HistoryBuilder nemesis(String f, String nemesis, String target) {
        tick++;
        events.add(new NemesisEvent(f, nemesis, target, 1_700_000_000_000L + tick, tick * 1_000_000L));
        return this;
    }

    HistoryBuilder commit(long seq, String resource, Long token, int process, long op) {
        events.add(new CommitRow(seq, resource, token, process, op));
        return this;
    }

    History build() {
        return new History(events, 0);
    }

    /** The last event added. */
    HistoryEvent last() {
        return events.get(events.size() - 1);
    }

    private HistoryBuilder add(OpType type, int process, long index, String f, String resource, Long token,
                               Object value, String reason) {
        tick++;
        events.add(new Op(type, process, index, f, resource, token, value, reason, 1_700_000_000_000L + tick,
                tick * 1_000_000L));
        return this;
    }
}
