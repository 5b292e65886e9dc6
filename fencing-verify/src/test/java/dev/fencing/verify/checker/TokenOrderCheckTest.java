package dev.fencing.verify.checker;

import dev.fencing.verify.history.CommitRow;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class TokenOrderCheckTest {

    private final TokenOrderCheck check = new TokenOrderCheck();

    @Test
    void nonDecreasingTokensPerResourceAreValid() {
        HistoryBuilder h = new HistoryBuilder()
                .commit(1, "a", 5L, 1, 0)
                .commit(2, "a", 5L, 1, 1)        // one lease carries its token on every write
                .commit(3, "b", 1L, 2, 0)        // another resource has its own order
                .commit(4, "a", null, 3, 0)      // no token: not judged
                .commit(5, "a", 9L, 2, 1);
        CheckReport report = check.check(h.build());
        assertThat(report.status()).isEqualTo(CheckReport.Status.CHECKED);
        assertThat(report.anomalies()).isEmpty();
        assertThat(report.figures()).containsEntry("rows", 5L).containsEntry("rows-with-token", 4L);
    }

    @Test
    void aLowerTokenAppliedAfterAHigherOneIsAStaleWrite() {
        HistoryBuilder h = new HistoryBuilder()
                .call(1, 0, "append", "a", 3L, null)
                .call(2, 4, "append", "a", 2L, null)
                .commit(2, "a", 2L, 2, 4)        // rows out of file order: seq decides
                .commit(1, "a", 3L, 1, 0)
                .commit(0, "a", 1L, 3, 0);
        CheckReport report = check.check(h.build());
        assertThat(report.anomalies()).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(AnomalyKind.STALE_WRITE_APPLIED);
            assertThat(a.description()).contains("token 2 (process 2, op 4, seq 2)").contains("after token 3");
            assertThat(a.events()).hasSize(4);
            assertThat(a.events().get(0)).isEqualTo(new CommitRow(1, "a", 3L, 1, 0));
            assertThat(a.events().get(1)).isEqualTo(new CommitRow(2, "a", 2L, 2, 4));
        });
    }

    @Test
    void oneTokenAppliedForTwoProcessesIsADuplicateWrite() {
        HistoryBuilder h = new HistoryBuilder()
                .commit(1, "a", 3L, 1, 0)
                .commit(2, "a", 3L, 2, 0);
        assertThat(check.check(h.build()).anomalies()).extracting(Anomaly::kind)
                .containsExactly(AnomalyKind.DUPLICATE_WRITE_APPLIED);
    }

    @Test
    void aHistoryWithoutCommitRowsIsNotApplicable() {
        assertThat(check.check(new HistoryBuilder().call(1, 0, "append", "a", 1L, null).build()).status())
                .isEqualTo(CheckReport.Status.NOT_APPLICABLE);
    }
}
