package dev.fencing.verify.checker;

import dev.fencing.verify.history.History;

import java.util.List;

/**
 * Runs every check on a history and reaches the verdict: {@code invalid} when any anomaly was found;
 * {@code unknown} when no check was applicable or one lacked its evidence; {@code valid} otherwise. The checks
 * decide for themselves whether the history holds operations of their kind, so one checker serves every workload.
 */
public final class Checker {

    private final List<Check> checks;
    private final AvailabilityCheck availability = new AvailabilityCheck();

    /** A checker with the given checks, run in this order. */
    public Checker(List<Check> checks) {
        this.checks = List.copyOf(checks);
    }

    /** Every check this module has: lock-set, counter, token order at the store, issuer monotonicity. */
    public static Checker standard() {
        return new Checker(List.of(new LockSetCheck(), new CounterCheck(), new TokenOrderCheck(),
                new IssuerMonotonicityCheck()));
    }

    /** Judges {@code history}. */
    public CheckResult check(History history) {
        List<CheckReport> reports = checks.stream().map(c -> c.check(history)).toList();
        boolean anomalies = reports.stream().anyMatch(r -> !r.anomalies().isEmpty());
        boolean checked = reports.stream().anyMatch(r -> r.status() == CheckReport.Status.CHECKED);
        boolean unknown = reports.stream().anyMatch(r -> r.status() == CheckReport.Status.UNKNOWN);
        Verdict verdict = anomalies ? Verdict.INVALID : (!checked || unknown) ? Verdict.UNKNOWN : Verdict.VALID;
        return new CheckResult(verdict, reports, availability.measure(history), history.events().size(),
                history.truncatedLines());
    }
}
