package dev.fencing.verify.checker;

import dev.fencing.verify.history.History;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The standard checker on one history per anomaly kind (each must come out invalid with that kind, so removing a
 * check from {@link Checker#standard()} fails here) and on a clean history of every workload (valid).
 */
class CheckerTest {

    static History clean() {
        return new HistoryBuilder()
                .call(1, 0, "acquire", "s", 1L, null).call(1, 1, "add", "s", 1L, 1L)
                .call(2, 0, "acquire", "s", 2L, null).call(2, 1, "add", "s", 2L, 2L)
                .call(1, 2, "acquire", "c", 1L, null).call(1, 3, "increment", "c", 1L, null)
                .call(3, 0, "read", "s", null, List.of(1L, 2L))
                .call(3, 1, "read", "c", null, 1L)
                .commit(1, "s", 1L, 1, 1).commit(2, "s", 2L, 2, 1)
                .build();
    }

    @Test
    void aCleanHistoryIsValid() {
        CheckResult result = Checker.standard().check(clean());
        assertThat(result.verdict()).isEqualTo(Verdict.VALID);
        assertThat(result.valid()).isTrue();
        assertThat(result.anomalies()).isEmpty();
        assertThat(result.checks()).extracting(CheckReport::status).containsOnly(CheckReport.Status.CHECKED);
    }

    @Test
    void eachAnomalyMakesTheHistoryInvalid() {
        assertInvalid(new HistoryBuilder().call(1, 0, "add", "s", 1L, 1L).call(2, 0, "read", "s", null, List.of()),
                AnomalyKind.LOST_WRITE);
        assertInvalid(new HistoryBuilder().invoke(1, 0, "add", "s", 1L).fail(1, 0, "add", "s", "stale")
                .call(2, 0, "read", "s", null, List.of(1L)), AnomalyKind.FAILED_WRITE_APPLIED);
        assertInvalid(new HistoryBuilder().call(1, 0, "append", "a", 1L, null).call(1, 1, "append", "a", 1L, null)
                .commit(1, "a", 1L, 1, 0), AnomalyKind.LOST_WRITE);
        assertInvalid(new HistoryBuilder().call(1, 0, "increment", "c", 1L, null).call(2, 0, "read", "c", null, 0L),
                AnomalyKind.COUNTER_OUT_OF_RANGE);
        assertInvalid(new HistoryBuilder().commit(1, "a", 2L, 1, 0).commit(2, "a", 1L, 2, 0),
                AnomalyKind.STALE_WRITE_APPLIED);
        assertInvalid(new HistoryBuilder().commit(1, "a", 2L, 1, 0).commit(2, "a", 2L, 2, 0),
                AnomalyKind.DUPLICATE_WRITE_APPLIED);
        assertInvalid(new HistoryBuilder().call(1, 0, "acquire", "a", 2L, null).call(2, 0, "acquire", "a", 2L, null),
                AnomalyKind.DUPLICATE_GRANT);
        assertInvalid(new HistoryBuilder().call(1, 0, "acquire", "a", 2L, null).call(2, 0, "acquire", "a", 1L, null),
                AnomalyKind.TOKEN_REGRESSION);
    }

    @Test
    void aHistoryWithNothingToJudgeIsUnknown() {
        assertThat(Checker.standard().check(new HistoryBuilder().build()).verdict()).isEqualTo(Verdict.UNKNOWN);
        assertThat(Checker.standard().check(new HistoryBuilder().call(1, 0, "add", "s", 1L, 1L).build()).verdict())
                .as("acknowledged adds but no final read").isEqualTo(Verdict.UNKNOWN);
    }

    private static void assertInvalid(HistoryBuilder history, AnomalyKind kind) {
        CheckResult result = Checker.standard().check(history.build());
        assertThat(result.verdict()).as(kind.label()).isEqualTo(Verdict.INVALID);
        assertThat(result.anomalies()).as(kind.label()).extracting(Anomaly::kind).containsExactly(kind);
    }
}
