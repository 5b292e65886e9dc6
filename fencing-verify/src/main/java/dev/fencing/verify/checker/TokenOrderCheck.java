package dev.fencing.verify.checker;

import dev.fencing.verify.history.CommitRow;
import dev.fencing.verify.history.History;
import dev.fencing.verify.history.HistoryEvent;
import dev.fencing.verify.history.Op;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Token order at the store, from the store's own commit order ({@link CommitRow}s, by sequence) per resource: a
 * write applied after a write with a higher token is a {@link AnomalyKind#STALE_WRITE_APPLIED}; a write applied
 * under the same token as an earlier write of another process is a {@link AnomalyKind#DUPLICATE_WRITE_APPLIED}.
 * Each anomaly lists both rows and the completions of the operations that made them, when the history has them.
 * Rows without a token are skipped; a history without commit rows is not applicable.
 */
public final class TokenOrderCheck implements Check {

    @Override
    public String name() {
        return "token-order";
    }

    @Override
    public CheckReport check(History history) {
        List<CommitRow> rows = history.commits();
        if (rows.isEmpty()) {
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
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("rows", (long) rows.size());
        figures.put("rows-with-token", checked);
        figures.put("out-of-order", (long) anomalies.size());
        return new CheckReport(name(), CheckReport.Status.CHECKED,
                anomalies.size() + " of " + checked + " rows out of token order", anomalies, figures);
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
