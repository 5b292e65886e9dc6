package dev.fencing.verify.checker;

import dev.fencing.verify.history.History;
import dev.fencing.verify.history.HistoryEvent;
import dev.fencing.verify.history.Op;
import dev.fencing.verify.history.OpType;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The operations of a history, each invocation paired with its completion by {@code (process, index)}. An
 * invocation without a completion (its process was killed, the run ended) counts as {@code info}: it may or may
 * not have taken effect.
 */
final class Operations {

    /** One operation: its invocation (null when the history lost it) and its completion (null when it has none). */
    record Operation(Op invoke, Op completion) {

        /** ok, fail or info; info when there is no completion. */
        OpType outcome() {
            return completion == null ? OpType.INFO : completion.type();
        }

        /** The event that names the operation best: the completion when there is one. */
        Op last() {
            return completion != null ? completion : invoke;
        }

        String f() {
            return last().f();
        }

        String resource() {
            return last().resource();
        }

        /** The invocation and the completion that exist, in that order. */
        List<HistoryEvent> events() {
            List<HistoryEvent> events = new ArrayList<>(2);
            if (invoke != null) {
                events.add(invoke);
            }
            if (completion != null) {
                events.add(completion);
            }
            return events;
        }
    }

    private Operations() {
    }

    /** Every operation of {@code history}, in the order of their first event in the file. */
    static List<Operation> of(History history) {
        Map<List<Long>, Op[]> byKey = new LinkedHashMap<>();
        for (Op op : history.ops()) {
            Op[] pair = byKey.computeIfAbsent(List.of((long) op.process(), op.index()), k -> new Op[2]);
            pair[op.type().isCompletion() ? 1 : 0] = op;
        }
        List<Operation> operations = new ArrayList<>(byKey.size());
        byKey.values().forEach(pair -> operations.add(new Operation(pair[0], pair[1])));
        return operations;
    }
}
