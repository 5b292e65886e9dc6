package dev.fencing.verify.checker;

import dev.fencing.verify.history.History;
import dev.fencing.verify.history.Op;
import dev.fencing.verify.history.OpType;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Issuer monotonicity, from the {@code acquire} operations that completed ok with a token, per resource. Two
 * grants of the same token to different processes are a {@link AnomalyKind#DUPLICATE_GRANT}. A grant whose
 * invocation began after another grant of the resource was acknowledged (by monotonic time) and that got a smaller
 * token is a {@link AnomalyKind#TOKEN_REGRESSION}, reported against the largest such earlier token. Only grants
 * ordered in real time are compared: a client paused between its grant and recording the ok must not look like a
 * regression, so overlapping acquisitions are never judged by their order.
 */
public final class IssuerMonotonicityCheck implements Check {

    @Override
    public String name() {
        return "issuer-monotonicity";
    }

    @Override
    public CheckReport check(History history) {
        Map<String, List<Operations.Operation>> grants = new LinkedHashMap<>();
        for (Operations.Operation operation : Operations.of(history)) {
            if ("acquire".equals(operation.f()) && operation.outcome() == OpType.OK && operation.invoke() != null
                    && operation.completion().token() != null) {
                grants.computeIfAbsent(operation.resource(), r -> new ArrayList<>()).add(operation);
            }
        }
        if (grants.isEmpty()) {
            return CheckReport.notApplicable(name(), "no acquire operations completed ok with a token");
        }
        List<Anomaly> anomalies = new ArrayList<>();
        long total = 0;
        for (Map.Entry<String, List<Operations.Operation>> entry : grants.entrySet()) {
            total += entry.getValue().size();
            duplicates(entry.getKey(), entry.getValue(), anomalies);
            regressions(entry.getKey(), entry.getValue(), anomalies);
        }
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("grants", total);
        figures.put("anomalies", (long) anomalies.size());
        return new CheckReport(name(), CheckReport.Status.CHECKED,
                anomalies.size() + " anomalies in " + total + " grants", anomalies, figures);
    }

    private static void duplicates(String resource, List<Operations.Operation> grants, List<Anomaly> anomalies) {
        Map<Long, Operations.Operation> first = new HashMap<>();
        for (Operations.Operation grant : byOk(grants)) {
            Op ok = grant.completion();
            Operations.Operation earlier = first.putIfAbsent(ok.token(), grant);
            if (earlier != null && earlier.completion().process() != ok.process()) {
                anomalies.add(new Anomaly(AnomalyKind.DUPLICATE_GRANT, resource,
                        "token " + ok.token() + " granted to process " + earlier.completion().process() + " (op "
                                + earlier.completion().index() + ") and to process " + ok.process() + " (op "
                                + ok.index() + ")",
                        List.of(earlier.completion(), ok)));
            }
        }
    }

    /** Sweeps invocations in time order, knowing the largest token acknowledged before each one began. */
    private static void regressions(String resource, List<Operations.Operation> grants, List<Anomaly> anomalies) {
        List<Operations.Operation> byOk = byOk(grants);
        List<Operations.Operation> byInvoke = new ArrayList<>(grants);
        byInvoke.sort(Comparator.comparingLong(o -> o.invoke().mono()));
        Op maxBefore = null;
        int next = 0;
        for (Operations.Operation grant : byInvoke) {
            while (next < byOk.size() && byOk.get(next).completion().mono() < grant.invoke().mono()) {
                Op ok = byOk.get(next++).completion();
                if (maxBefore == null || ok.token() > maxBefore.token()) {
                    maxBefore = ok;
                }
            }
            Op ok = grant.completion();
            if (maxBefore != null && ok.token() < maxBefore.token()) {
                anomalies.add(new Anomaly(AnomalyKind.TOKEN_REGRESSION, resource,
                        "process " + ok.process() + " (op " + ok.index() + ") was granted token " + ok.token()
                                + " after process " + maxBefore.process() + " (op " + maxBefore.index()
                                + ") had been granted " + maxBefore.token(),
                        List.of(maxBefore, grant.invoke(), ok)));
            }
        }
    }

    private static List<Operations.Operation> byOk(List<Operations.Operation> grants) {
        List<Operations.Operation> sorted = new ArrayList<>(grants);
        sorted.sort(Comparator.comparingLong(o -> o.completion().mono()));
        return sorted;
    }
}
