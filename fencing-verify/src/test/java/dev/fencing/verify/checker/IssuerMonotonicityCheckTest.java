package dev.fencing.verify.checker;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class IssuerMonotonicityCheckTest {

    private final IssuerMonotonicityCheck check = new IssuerMonotonicityCheck();

    @Test
    void increasingGrantsAreValid() {
        HistoryBuilder h = new HistoryBuilder()
                .call(1, 0, "acquire", "r", 1L, null)
                .call(2, 0, "acquire", "r", 2L, null)
                .call(1, 1, "acquire", "r", 4L, null)
                .call(3, 0, "acquire", "other", 1L, null)    // its own resource
                .invoke(2, 1, "acquire", "r", null).fail(2, 1, "acquire", "r", "timeout");
        CheckReport report = check.check(h.build());
        assertThat(report.status()).isEqualTo(CheckReport.Status.CHECKED);
        assertThat(report.anomalies()).isEmpty();
        assertThat(report.figures()).containsEntry("grants", 4L);
    }

    @Test
    void oneTokenGrantedToTwoProcessesIsADuplicateGrant() {
        HistoryBuilder h = new HistoryBuilder()
                .call(1, 0, "acquire", "r", 5L, null);
        var first = h.last();
        h.call(2, 0, "acquire", "r", 5L, null);
        var second = h.last();
        assertThat(check.check(h.build()).anomalies()).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(AnomalyKind.DUPLICATE_GRANT);
            assertThat(a.events()).containsExactly(first, second);
            assertThat(a.description()).contains("token 5 granted to process 1 (op 0) and to process 2 (op 0)");
        });
    }

    @Test
    void aSmallerTokenGrantedAfterALargerOneWasAcknowledgedIsARegression() {
        HistoryBuilder h = new HistoryBuilder()
                .call(1, 0, "acquire", "r", 7L, null)
                .call(2, 0, "acquire", "r", 3L, null)
                .call(3, 0, "acquire", "r", 6L, null);
        CheckReport report = check.check(h.build());
        assertThat(report.anomalies()).hasSize(2).allSatisfy(a -> {
            assertThat(a.kind()).isEqualTo(AnomalyKind.TOKEN_REGRESSION);
            assertThat(a.description()).contains("after process 1 (op 0) had been granted 7");
        });
    }

    @Test
    void overlappingAcquisitionsAreNotJudgedByTheOrderOfTheirAcknowledgements() {
        // process 1 is granted 7 and pauses before recording it; meanwhile process 2 is granted 8 and records it
        // first: the ok of 7 comes later in the file, but both grants overlap, so neither order is a regression
        HistoryBuilder h = new HistoryBuilder()
                .invoke(1, 0, "acquire", "r", null)
                .call(2, 0, "acquire", "r", 8L, null)
                .ok(1, 0, "acquire", "r", 7L, null);
        assertThat(check.check(h.build()).anomalies()).isEmpty();
    }

    @Test
    void theSameProcessHoldingItsTokenAgainIsNoDuplicate() {
        HistoryBuilder h = new HistoryBuilder()
                .call(1, 0, "acquire", "r", 5L, null)
                .call(1, 1, "acquire", "r", 5L, null);
        assertThat(check.check(h.build()).anomalies()).isEmpty();
    }

    @Test
    void aHistoryWithoutGrantsIsNotApplicable() {
        assertThat(check.check(new HistoryBuilder().call(1, 0, "add", "s", 1L, 1L).build()).status())
                .isEqualTo(CheckReport.Status.NOT_APPLICABLE);
    }
}
