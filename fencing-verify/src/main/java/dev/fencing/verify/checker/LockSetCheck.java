package dev.fencing.verify.checker;

import dev.fencing.verify.history.History;
import dev.fencing.verify.history.Op;
import dev.fencing.verify.history.OpType;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The {@code lock-set} workload: every {@code add x} that completed ok must be in the final {@code read} of the
 * set (the last ok read of the resource, whose value is the list of elements). Each acknowledged element missing
 * from it is a {@link AnomalyKind#LOST_WRITE} listing the add's events. Adds that are unknown may be
 * present or absent, but an add that failed (it certainly did not apply) and is in the final read is a
 * {@link AnomalyKind#FAILED_WRITE_APPLIED}. A resource with adds but no ok read cannot be judged: {@code unknown}.
 */
public final class LockSetCheck implements Check {

    @Override
    public String name() {
        return "lock-set";
    }

    @Override
    public CheckReport check(History history) {
        List<Operations.Operation> operations = Operations.of(history);
        Map<String, List<Operations.Operation>> addsByResource = new LinkedHashMap<>();
        for (Operations.Operation operation : operations) {
            if ("add".equals(operation.f())) {
                addsByResource.computeIfAbsent(operation.resource(), r -> new ArrayList<>()).add(operation);
            }
        }
        if (addsByResource.isEmpty()) {
            return CheckReport.notApplicable(name(), "no add operations");
        }
        List<Anomaly> anomalies = new ArrayList<>();
        List<String> unread = new ArrayList<>();
        Map<String, Object> figures = new LinkedHashMap<>();
        long acknowledged = 0;
        long lost = 0;
        for (Map.Entry<String, List<Operations.Operation>> entry : addsByResource.entrySet()) {
            String resource = entry.getKey();
            Optional<Op> read = FinalRead.of(operations, resource);
            if (read.isEmpty() || !(read.get().value() instanceof List<?> elements)) {
                unread.add(resource);
                continue;
            }
            Set<Object> present = new HashSet<>(elements);
            Set<Object> seen = new LinkedHashSet<>();
            for (Operations.Operation add : entry.getValue()) {
                if (add.outcome() == OpType.FAIL && add.invoke() != null
                        && present.contains(add.invoke().value())) {
                    anomalies.add(new Anomaly(AnomalyKind.FAILED_WRITE_APPLIED, resource,
                            "add " + add.invoke().value() + " by process " + add.last().process() + " (op "
                                    + add.last().index() + ") failed" + because(add.completion().reason())
                                    + " but is in the final read (process " + read.get().process() + ", op "
                                    + read.get().index() + ")",
                            add.events()));
                }
                if (add.outcome() != OpType.OK) {
                    continue;
                }
                acknowledged++;
                Object element = add.completion().value() != null ? add.completion().value() : add.invoke().value();
                if (!present.contains(element) && seen.add(element)) {
                    lost++;
                    anomalies.add(new Anomaly(AnomalyKind.LOST_WRITE, resource,
                            "add " + element + " by process " + add.last().process() + " (op " + add.last().index()
                                    + ") was acknowledged but is missing from the final read (process "
                                    + read.get().process() + ", op " + read.get().index() + ")",
                            add.events()));
                }
            }
        }
        figures.put("acknowledged-adds", acknowledged);
        figures.put("lost", lost);
        figures.put("failed-but-applied", anomalies.size() - lost);
        if (!unread.isEmpty()) {
            figures.put("resources-without-final-read", unread);
        }
        CheckReport.Status status = unread.isEmpty() || !anomalies.isEmpty()
                ? CheckReport.Status.CHECKED : CheckReport.Status.UNKNOWN;
        String note = unread.isEmpty() ? lost + " of " + acknowledged + " acknowledged adds lost"
                + (anomalies.size() > lost ? ", " + (anomalies.size() - lost) + " failed adds applied" : "")
                : "no final read for " + unread;
        return new CheckReport(name(), status, note, anomalies, figures);
    }

    /** " (reason)", or nothing when the completion gave none. */
    static String because(String reason) {
        return reason == null ? "" : " (" + reason + ")";
    }
}
