package dev.fencing.verify.checker;

import dev.fencing.verify.history.History;
import dev.fencing.verify.history.Op;
import dev.fencing.verify.history.OpType;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code counter} workload, a counter starting at 0: the final {@code read} (the last ok read of the resource)
 * must lie in [acknowledged, acknowledged + unknown] increments, where acknowledged are the ok increments and
 * unknown the info ones and those that never completed (failed increments did not apply). A value below the range
 * means acknowledged increments were lost, above it increments applied that nobody made; either is a
 * {@link AnomalyKind#COUNTER_OUT_OF_RANGE} reporting the range. Each ok increment records the value it wrote: two
 * acknowledged increments of one counter that wrote the same value are a {@link AnomalyKind#LOST_WRITE} (one
 * overwrote the other), found even when unknown increments keep the final value in range. No ok read, or one whose
 * value is not an integer: {@code unknown}.
 */
public final class CounterCheck implements Check {

    @Override
    public String name() {
        return "counter";
    }

    @Override
    public CheckReport check(History history) {
        List<Operations.Operation> operations = Operations.of(history);
        Map<String, long[]> counts = new LinkedHashMap<>();   // resource -> {ok, unknown, failed}
        Map<List<Object>, Op> written = new HashMap<>();      // (resource, value written) -> the ok that wrote it
        List<Anomaly> anomalies = new ArrayList<>();
        for (Operations.Operation operation : operations) {
            if (!"increment".equals(operation.f())) {
                continue;
            }
            long[] c = counts.computeIfAbsent(operation.resource(), r -> new long[3]);
            OpType outcome = operation.outcome();
            c[outcome == OpType.OK ? 0 : outcome == OpType.INFO ? 1 : 2]++;
            Long value = outcome == OpType.OK ? operation.completion().longValue() : null;
            if (value != null) {
                Op ok = operation.completion();
                Op earlier = written.putIfAbsent(Arrays.asList(operation.resource(), value), ok);
                if (earlier != null) {
                    anomalies.add(new Anomaly(AnomalyKind.LOST_WRITE, operation.resource(),
                            "increments by process " + earlier.process() + " (op " + earlier.index()
                                    + ") and process " + ok.process() + " (op " + ok.index() + ") both wrote "
                                    + value + ": one acknowledged increment overwrote the other",
                            List.of(earlier, ok)));
                }
            }
        }
        if (counts.isEmpty()) {
            return CheckReport.notApplicable(name(), "no increment operations");
        }
        List<String> unread = new ArrayList<>();
        Map<String, Object> figures = new LinkedHashMap<>();
        for (Map.Entry<String, long[]> entry : counts.entrySet()) {
            String resource = entry.getKey();
            long ok = entry.getValue()[0];
            long unknown = entry.getValue()[1];
            Optional<Op> read = FinalRead.of(operations, resource);
            Long value = read.map(Op::longValue).orElse(null);
            Map<String, Object> perResource = new LinkedHashMap<>();
            perResource.put("acknowledged", ok);
            perResource.put("unknown", unknown);
            perResource.put("failed", entry.getValue()[2]);
            perResource.put("final", value);
            figures.put(String.valueOf(resource), perResource);
            if (value == null) {
                unread.add(resource);
                continue;
            }
            if (value < ok || value > ok + unknown) {
                String what = value < ok ? (ok - value) + " acknowledged increments lost"
                        : (value - ok - unknown) + " increments applied that were never made";
                anomalies.add(new Anomaly(AnomalyKind.COUNTER_OUT_OF_RANGE, resource,
                        "final value " + value + " outside [" + ok + ", " + (ok + unknown) + "] (" + ok
                                + " acknowledged, " + unknown + " unknown increments): " + what,
                        List.of(read.get())));
            }
        }
        CheckReport.Status status = unread.isEmpty() || !anomalies.isEmpty()
                ? CheckReport.Status.CHECKED : CheckReport.Status.UNKNOWN;
        long overwritten = anomalies.stream().filter(a -> a.kind() == AnomalyKind.LOST_WRITE).count();
        String note = unread.isEmpty() ? (anomalies.size() - overwritten) + " resource(s) out of range"
                + (overwritten > 0 ? ", " + overwritten + " acknowledged increments overwritten" : "")
                : "no final read (ok, with an integer value) for " + unread;
        return new CheckReport(name(), status, note, anomalies, figures);
    }
}
