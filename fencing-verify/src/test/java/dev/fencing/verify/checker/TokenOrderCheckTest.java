package dev.fencing.verify.checker;

import dev.fencing.verify.history.CommitRow;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

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
    @Timeout(10)
    void aFailedAppendInTheLogIsAFailedWriteApplied() {
        HistoryBuilder h = new HistoryBuilder()
                .call(1, 1, "append", "a", 5L, null)
                .invoke(2, 1, "append", "a", null).fail(2, 1, "append", "a", "stale: max_seen 5");
        var refused = h.last();
        h.invoke(3, 1, "append", "a", null).fail(3, 1, "append", "a", "stale")    // refused and absent: fine
                .invoke(4, 1, "append", "a", null).fail(4, 1, "append", "a", null)     // no reason given
                .commit(1, "a", 5L, 1, 1).commit(2, "a", 6L, 2, 1).commit(3, "a", 7L, 4, 1);
        CheckReport report = check.check(h.build());
        assertThat(report.anomalies()).hasSize(2).allSatisfy(a ->
                assertThat(a.kind()).isEqualTo(AnomalyKind.FAILED_WRITE_APPLIED));
        assertThat(report.anomalies().get(0).description()).isEqualTo("append by process 2 (op 1, token 6) failed "
                + "(stale: max_seen 5) but is in the log (seq 2)");
        assertThat(report.anomalies().get(0).events()).containsExactly(new CommitRow(2, "a", 6L, 2, 1), refused);
        assertThat(report.anomalies().get(1).description())
                .isEqualTo("append by process 4 (op 1, token 7) failed but is in the log (seq 3)");
        assertThat(report.figures()).containsEntry("failed-but-applied", 2L).containsEntry("lost", 0L);
    }

    @Test
    void aHistoryWithoutAppendsOrCommitRowsIsNotApplicable() {
        assertThat(check.check(new HistoryBuilder().call(1, 0, "acquire", "a", 1L, null).build()).status())
                .isEqualTo(CheckReport.Status.NOT_APPLICABLE);
    }

    @Test
    @Timeout(10)
    void acknowledgedAppendsWithoutTheLogCannotBeJudged() {
        // the append run's final read of its log is missing: nothing was checked, so not valid
        CheckReport report = check.check(new HistoryBuilder().call(1, 0, "append", "a", 1L, null).build());
        assertThat(report.status()).isEqualTo(CheckReport.Status.UNKNOWN);
        assertThat(report.note()).contains("no commit rows for [a]");
        assertThat(Checker.standard().check(new HistoryBuilder()
                .call(1, 0, "acquire", "a", 1L, null).call(1, 1, "append", "a", 1L, null).build()).verdict())
                .isEqualTo(Verdict.UNKNOWN);

        // two resources, the log of one read back: the other cannot be judged either
        HistoryBuilder half = new HistoryBuilder()
                .call(1, 1, "append", "append-0", 1L, null).call(2, 1, "append", "append-1", 2L, null)
                .commit(1, "append-0", 1L, 1, 1);
        CheckReport partial = check.check(half.build());
        assertThat(partial.status()).isEqualTo(CheckReport.Status.UNKNOWN);
        assertThat(partial.figures()).containsEntry("resources-without-commit-rows", List.of("append-1"));
    }

    @Test
    @Timeout(10)
    void aLogWhoseRowsCarryNoTokenCannotBeJudged() {
        CheckReport report = check.check(new HistoryBuilder()
                .commit(1, "a", null, 1, 0).commit(2, "a", null, 2, 0).build());
        assertThat(report.status()).isEqualTo(CheckReport.Status.UNKNOWN);
        assertThat(report.note()).contains("no commit row carries a token");
    }

    @Test
    @Timeout(10)
    void anAcknowledgedAppendMissingFromTheLogIsALostWrite() {
        HistoryBuilder h = new HistoryBuilder()
                .call(1, 1, "append", "a", 3L, null)
                .invoke(2, 1, "append", "a", null).ok(2, 1, "append", "a", 4L, null);
        var lostOk = h.last();
        h.invoke(3, 1, "append", "a", null).info(3, 1, "append", "a", "timeout")   // unknown: may be absent
                .commit(1, "a", 3L, 1, 1);
        CheckReport report = check.check(h.build());
        assertThat(report.anomalies()).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(AnomalyKind.LOST_WRITE);
            assertThat(a.resource()).isEqualTo("a");
            assertThat(a.description()).isEqualTo("append by process 2 (op 1, token 4) was acknowledged but has no "
                    + "row in the log");
            assertThat(a.events()).hasSize(2).contains(lostOk);
        });
        assertThat(report.figures()).containsEntry("lost", 1L).containsEntry("out-of-order", 0L);
    }
    @Test
    @Timeout(10)
    void oneOperationInTwoRowsIsAWriteAppliedTwice() {
        HistoryBuilder h = new HistoryBuilder()
                .call(1, 1, "append", "a", 3L, null)
                .call(2, 1, "append", "a", 4L, null)
                .commit(1, "a", 3L, 1, 1)
                .commit(2, "a", 4L, 2, 1)
                .commit(3, "a", 4L, 2, 1);       // the same append applied again (a retried statement)
        CheckReport report = check.check(h.build());
        assertThat(report.anomalies()).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(AnomalyKind.DUPLICATE_WRITE_APPLIED);
            assertThat(a.resource()).isEqualTo("a");
            assertThat(a.description()).isEqualTo("append by process 2 (op 1) applied twice: token 4 at seq 2 and "
                    + "token 4 at seq 3");
            assertThat(a.events()).startsWith(new CommitRow(2, "a", 4L, 2, 1), new CommitRow(3, "a", 4L, 2, 1))
                    .hasSize(4);
        });
        assertThat(report.figures()).containsEntry("applied-twice", 1L).containsEntry("out-of-order", 0L);

        // once more without a token in the rows, and across two resources: still one operation, two rows
        CheckReport untokened = check.check(new HistoryBuilder()
                .commit(1, "a", 5L, 1, 0).commit(2, "a", null, 1, 1).commit(3, "b", null, 1, 1).build());
        assertThat(untokened.anomalies()).extracting(Anomaly::kind)
                .containsExactly(AnomalyKind.DUPLICATE_WRITE_APPLIED);
        assertThat(untokened.anomalies().get(0).description()).contains("seq 2").contains("seq 3");
    }

    @Test
    @Timeout(10)
    void aRowWhoseTokenIsNotTheOneItsOperationRecordedIsATokenMismatch() {
        // the tokens of two rows swapped: the order still rises, only the operations' own tokens show it
        HistoryBuilder h = new HistoryBuilder()
                .call(1, 1, "append", "a", 3L, null)
                .call(2, 1, "append", "a", 5L, null);
        var second = h.last();
        h.invoke(3, 1, "append", "a", null).info(3, 1, "append", "a", "timeout")   // no token recorded: not judged
                .commit(1, "a", 3L, 2, 1)
                .commit(2, "a", 5L, 1, 1)
                .commit(3, "a", 6L, 3, 1);
        CheckReport report = check.check(h.build());
        assertThat(report.anomalies()).hasSize(2).allSatisfy(a ->
                assertThat(a.kind()).isEqualTo(AnomalyKind.TOKEN_MISMATCH));
        Anomaly first = report.anomalies().get(0);
        assertThat(first.description()).isEqualTo("row at seq 1 (process 2, op 1) carries token 3 but its append "
                + "recorded token 5");
        assertThat(first.events()).first().isEqualTo(new CommitRow(1, "a", 3L, 2, 1));
        assertThat(first.events()).contains(second);
        assertThat(report.anomalies().get(1).description()).contains("carries token 5").contains("recorded token 3");
        assertThat(report.figures()).containsEntry("token-mismatch", 2L).containsEntry("out-of-order", 0L);

        // a token recorded on the invocation only counts too; a row without a token is not judged
        CheckReport onInvoke = check.check(new HistoryBuilder()
                .invoke(1, 1, "append", "a", 6L, null).info(1, 1, "append", "a", "timeout")
                .call(2, 1, "append", "a", 8L, null)
                .commit(1, "a", 7L, 1, 1).commit(2, "a", null, 2, 1).build());
        assertThat(onInvoke.anomalies()).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(AnomalyKind.TOKEN_MISMATCH);
            assertThat(a.description()).contains("carries token 7").contains("recorded token 6");
        });
    }
}
