package dev.fencing.verify.checker;

import java.util.List;

/**
 * Everything the checker concluded about one history: the verdict, each check's report, all anomalies found (in
 * check order) and the availability figures. What {@link SummaryJson} and {@link MarkdownSummary} write.
 *
 * @param verdict        valid, invalid or unknown
 * @param checks         one report per check, in the order they ran
 * @param availability   outcomes overall, per nemesis window and outside windows
 * @param events         how many events the history held
 * @param truncatedLines partial last lines the reader dropped
 */
public record CheckResult(Verdict verdict, List<CheckReport> checks, Availability availability, long events,
                          int truncatedLines) {

    public CheckResult {
        checks = List.copyOf(checks);
    }

    /** Every anomaly of every check, in check order. */
    public List<Anomaly> anomalies() {
        return checks.stream().flatMap(c -> c.anomalies().stream()).toList();
    }

    /** Whether the history is {@code valid}. */
    public boolean valid() {
        return verdict == Verdict.VALID;
    }
}
