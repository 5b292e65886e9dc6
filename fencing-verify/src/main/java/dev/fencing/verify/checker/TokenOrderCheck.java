package dev.fencing.verify.checker;

import dev.fencing.verify.history.CommitRow;
import dev.fencing.verify.history.History;
import dev.fencing.verify.history.HistoryEvent;
import dev.fencing.verify.history.Op;
import dev.fencing.verify.history.OpType;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Token order at the store, from the store's own commit order ({@link CommitRow}s, by sequence) per resource: a
 * write applied after a write with a higher token is a {@link AnomalyKind#STALE_WRITE_APPLIED}; a write applied
 * under the same token as an earlier write of another process is a {@link AnomalyKind#DUPLICATE_WRITE_APPLIED}, and
 * so is a second row of one operation {@code (process, op)} (one write applied twice, whatever its tokens).
 * Each anomaly lists both rows and the completions of the operations that made them, when the history has them.
 * A row whose token is not the one its operation recorded (on its invocation or completion) is a
 * {@link AnomalyKind#TOKEN_MISMATCH}.
 * An {@code append} that completed ok whose row is not in the log is a {@link AnomalyKind#LOST_WRITE}; one that
 * completed fail whose row is in it, a {@link AnomalyKind#FAILED_WRITE_APPLIED}. Rows without a token are skipped
 * in the token comparisons. The log is the evidence: a resource with acknowledged appends but no commit row, or a
 * log with no row carrying a token, cannot be judged ({@code unknown}); a history with neither appends nor commit
 * rows is not applicable.
 */
public final class TokenOrderCheck implements Check {

    @Override
    public String name() {
        return "token-order";
    }

    @Override
    public CheckReport check(History history) {
        List<CommitRow> rows = history.commits();
        Map<String, List<Operations.Operation>> appends = new LinkedHashMap<>();
        List<Operations.Operation> failed = new ArrayList<>();
        for (Operations.Operation operation : Operations.of(history)) {
            if ("append".equals(operation.f()) && operation.outcome() == OpType.OK) {
                appends.computeIfAbsent(operation.resource(), r -> new ArrayList<>()).add(operation);
            } else if ("append".equals(operation.f()) && operation.outcome() == OpType.FAIL) {
                failed.add(operation);
            }
        }
        if (rows.isEmpty() && appends.isEmpty()) {
            return CheckReport.notApplicable(name(), "no commit rows (the workload does not read the store's order)");
        }
        Map<List<Long>, Op> completions = new HashMap<>();
        for (Op op : history.ops()) {
            if (op.type().isCompletion()) {
                completions.put(List.of((long) op.process(), op.index()), op);
            }
        }
        Map<String, CommitRow> highest = new HashMap<>();
        List<Anomaly> anomalies = new ArrayList<>();
        long checked = 0;
        for (CommitRow row : rows) {
            if (row.token() == null) {
                continue;
            }
            checked++;
            CommitRow max = highest.get(row.resource());
            if (max == null || row.token() > max.token()) {
                highest.put(row.resource(), row);
            } else if (row.token() < max.token()) {
                anomalies.add(new Anomaly(AnomalyKind.STALE_WRITE_APPLIED, row.resource(),
                        "write with token " + row.token() + " (process " + row.process() + ", op " + row.op()
                                + ", seq " + row.seq() + ") applied after token " + max.token() + " (process "
                                + max.process() + ", op " + max.op() + ", seq " + max.seq() + ")",
                        events(max, row, completions)));
            } else if (row.process() != max.process()) {
                anomalies.add(new Anomaly(AnomalyKind.DUPLICATE_WRITE_APPLIED, row.resource(),
                        "token " + row.token() + " applied for process " + max.process() + " (seq " + max.seq()
                                + ") and for process " + row.process() + " (seq " + row.seq() + ")",
                        events(max, row, completions)));
            }
        }
        long outOfOrder = anomalies.size();
        List<String> unread = lostAppends(rows, appends, anomalies);
        long lost = anomalies.size() - outOfOrder;
        failedApplied(rows, failed, completions, anomalies);
        long failedButApplied = anomalies.size() - outOfOrder - lost;
        Map<List<Long>, Operations.Operation> byKey = new HashMap<>();
        for (Operations.Operation operation : Operations.of(history)) {
            Op last = operation.last();
            byKey.put(List.of((long) last.process(), last.index()), operation);
        }
        appliedTwice(rows, byKey, anomalies);
        long twice = anomalies.size() - outOfOrder - lost - failedButApplied;
        tokenMismatches(rows, byKey, anomalies);
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("rows", (long) rows.size());
        figures.put("rows-with-token", checked);
        figures.put("out-of-order", outOfOrder);
        figures.put("lost", lost);
        figures.put("failed-but-applied", failedButApplied);
        figures.put("applied-twice", twice);
        figures.put("token-mismatch", anomalies.size() - outOfOrder - lost - failedButApplied - twice);
        if (!unread.isEmpty()) {
            figures.put("resources-without-commit-rows", unread);
        }
        String note = outOfOrder + " of " + checked + " rows out of token order";
        CheckReport.Status status = CheckReport.Status.CHECKED;
        if (anomalies.isEmpty() && !unread.isEmpty()) {
            status = CheckReport.Status.UNKNOWN;
            note = "no commit rows for " + unread;
        } else if (anomalies.isEmpty() && checked == 0) {
            status = CheckReport.Status.UNKNOWN;
            note = "no commit row carries a token";
        }
        return new CheckReport(name(), status, note, anomalies, figures);
    }

    /**
     * Adds a lost write for each acknowledged append whose row is missing from a resource's log; returns the
     * resources with acknowledged appends and no row at all (their log was not read: nothing to judge).
     */
    private static List<String> lostAppends(List<CommitRow> rows, Map<String, List<Operations.Operation>> appends,
                                            List<Anomaly> anomalies) {
        Map<String, Set<List<Long>>> written = new HashMap<>();
        for (CommitRow row : rows) {
            written.computeIfAbsent(row.resource(), r -> new HashSet<>()).add(List.of((long) row.process(), row.op()));
        }
        List<String> unread = new ArrayList<>();
        for (Map.Entry<String, List<Operations.Operation>> entry : appends.entrySet()) {
            Set<List<Long>> log = written.get(entry.getKey());
            if (log == null) {
                unread.add(entry.getKey());
                continue;
            }
            for (Operations.Operation append : entry.getValue()) {
                Op ok = append.completion();
                if (!log.contains(List.of((long) ok.process(), ok.index()))) {
                    anomalies.add(new Anomaly(AnomalyKind.LOST_WRITE, entry.getKey(),
                            "append by process " + ok.process() + " (op " + ok.index() + ", token " + ok.token()
                                    + ") was acknowledged but has no row in the log",
                            append.events()));
                }
            }
        }
        return unread;
    }

    /** Adds a failed-write-applied for each row written by an append that completed fail. */
    private static void failedApplied(List<CommitRow> rows, List<Operations.Operation> failed,
                                      Map<List<Long>, Op> completions, List<Anomaly> anomalies) {
        if (failed.isEmpty()) {
            return;
        }
        for (CommitRow row : rows) {
            Op completion = completions.get(List.of((long) row.process(), row.op()));
            if (completion != null && completion.type() == OpType.FAIL && "append".equals(completion.f())) {
                anomalies.add(new Anomaly(AnomalyKind.FAILED_WRITE_APPLIED, row.resource(),
                        "append by process " + row.process() + " (op " + row.op() + ", token " + row.token()
                                + ") failed" + LockSetCheck.because(completion.reason()) + " but is in the log (seq "
                                + row.seq() + ")",
                        List.of(row, completion)));
            }
        }
    }

    /**
     * Adds a duplicate write for each row whose operation {@code (process, op)} already wrote an earlier row: one
     * operation applied twice (a retried statement, a replayed message), whatever the tokens and resources.
     */
    private static void appliedTwice(List<CommitRow> rows, Map<List<Long>, Operations.Operation> operations,
                                     List<Anomaly> anomalies) {
        Map<List<Long>, CommitRow> first = new HashMap<>();
        for (CommitRow row : rows) {
            List<Long> key = List.of((long) row.process(), row.op());
            CommitRow earlier = first.putIfAbsent(key, row);
            if (earlier != null) {
                List<HistoryEvent> events = new ArrayList<>(4);
                events.add(earlier);
                events.add(row);
                Operations.Operation operation = operations.get(key);
                if (operation != null) {
                    events.addAll(operation.events());
                }
                anomalies.add(new Anomaly(AnomalyKind.DUPLICATE_WRITE_APPLIED, row.resource(),
                        "append by process " + row.process() + " (op " + row.op() + ") applied twice: "
                                + tokenAt(earlier) + " and " + tokenAt(row), events));
            }
        }
    }

    /**
     * Adds a token mismatch for each row with a token whose operation recorded another token on its invocation or
     * its completion: the log says the write ran under a token its client never held for it.
     */
    private static void tokenMismatches(List<CommitRow> rows, Map<List<Long>, Operations.Operation> operations,
                                        List<Anomaly> anomalies) {
        for (CommitRow row : rows) {
            Operations.Operation operation = operations.get(List.of((long) row.process(), row.op()));
            if (row.token() == null || operation == null) {
                continue;
            }
            for (Op recorded : new Op[] {operation.invoke(), operation.completion()}) {
                if (recorded != null && recorded.token() != null && !recorded.token().equals(row.token())) {
                    List<HistoryEvent> events = new ArrayList<>(3);
                    events.add(row);
                    events.addAll(operation.events());
                    anomalies.add(new Anomaly(AnomalyKind.TOKEN_MISMATCH, row.resource(),
                            "row at seq " + row.seq() + " (process " + row.process() + ", op " + row.op()
                                    + ") carries token " + row.token() + " but its " + operation.f()
                                    + " recorded token " + recorded.token(), events));
                    break;
                }
            }
        }
    }

    private static String tokenAt(CommitRow row) {
        return (row.token() == null ? "no token" : "token " + row.token()) + " at seq " + row.seq();
    }

    private static List<HistoryEvent> events(CommitRow first, CommitRow second, Map<List<Long>, Op> completions) {
        List<HistoryEvent> events = new ArrayList<>(4);
        events.add(first);
        events.add(second);
        for (CommitRow row : List.of(first, second)) {
            Op op = completions.get(List.of((long) row.process(), row.op()));
            if (op != null) {
                events.add(op);
            }
        }
        return events;
    }
}
