package dev.fencing.verify.checker;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What one {@link Check} concluded: whether it could judge the history ({@link Status}), the anomalies it found,
 * and a few figures (counts, ranges) for the reports, in insertion order.
 *
 * @param check     the check's name
 * @param status    checked, not applicable (no operations of its kind) or unknown (its evidence is missing)
 * @param note      why it is not applicable or unknown, or a short summary; may be empty
 * @param anomalies what it found, empty when none
 * @param figures   named figures for the reports (numbers, strings, lists of those)
 */
public record CheckReport(String check, Status status, String note, List<Anomaly> anomalies,
                          Map<String, Object> figures) {

    public CheckReport {
        Objects.requireNonNull(check, "check");
        Objects.requireNonNull(status, "status");
        anomalies = List.copyOf(anomalies);
        figures = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(figures));
    }

    /** A check that found nothing of its kind to judge. */
    public static CheckReport notApplicable(String check, String why) {
        return new CheckReport(check, Status.NOT_APPLICABLE, why, List.of(), Map.of());
    }

    /** Whether a check can judge a history. */
    public enum Status {
        /** The check ran on evidence it found; its anomalies (maybe none) are the verdict. */
        CHECKED,
        /** The history holds no operations this check is about. */
        NOT_APPLICABLE,
        /** The history holds such operations but not the evidence to judge them (a missing final read). */
        UNKNOWN
    }
}
