package dev.fencing.verify.plot;

import dev.fencing.verify.history.History;
import dev.fencing.verify.history.Op;
import dev.fencing.verify.history.OpType;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The operations of a history as the plots need them: when each ended (seconds since the history's first event), how
 * long it took and how it ended. An operation that never completed has no latency and is left out of the timeline
 * (the window chart counts it as unknown).
 *
 * @param process   the client
 * @param f         the operation
 * @param atSeconds its completion, seconds since the first event
 * @param latencyMs invocation to completion, milliseconds
 * @param outcome   ok, fail or info
 */
record Timed(int process, String f, double atSeconds, double latencyMs, OpType outcome) {

    /** The completed operations of {@code history}, in file order; {@code origin} is the mono time of second 0. */
    static List<Timed> of(History history, long origin) {
        Map<List<Long>, Op> invokes = new LinkedHashMap<>();
        List<Timed> timed = new ArrayList<>();
        for (Op op : history.ops()) {
            List<Long> key = List.of((long) op.process(), op.index());
            if (!op.type().isCompletion()) {
                invokes.put(key, op);
                continue;
            }
            Op invoke = invokes.remove(key);
            if (invoke != null) {
                timed.add(new Timed(op.process(), op.f(), (op.mono() - origin) / 1e9,
                        Math.max(0, op.mono() - invoke.mono()) / 1e6, op.type()));
            }
        }
        return timed;
    }
}
