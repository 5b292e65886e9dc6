package dev.fencing.verify.checker;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class CounterCheckTest {

    private final CounterCheck check = new CounterCheck();

    /** 3 acknowledged, 1 info, 1 never completed, 1 failed: the final value may be 3, 4 or 5. */
    private static HistoryBuilder increments() {
        return new HistoryBuilder()
                .call(1, 0, "increment", "c", 1L, null)
                .call(2, 0, "increment", "c", 2L, null)
                .call(3, 0, "increment", "c", 3L, null)
                .invoke(4, 0, "increment", "c", null).info(4, 0, "increment", "c", "connection lost")
                .invoke(5, 0, "increment", "c", null)
                .invoke(6, 0, "increment", "c", null).fail(6, 0, "increment", "c", "stale token");
    }

    @Test
    void aFinalValueWithinTheRangeIsValid() {
        for (long value = 3; value <= 5; value++) {
            CheckReport report = check.check(increments().call(1, 1, "read", "c", null, value).build());
            assertThat(report.status()).isEqualTo(CheckReport.Status.CHECKED);
            assertThat(report.anomalies()).as("final " + value).isEmpty();
        }
    }

    @Test
    void aFinalValueBelowTheAcknowledgedIncrementsMeansLostIncrements() {
        CheckReport report = check.check(increments().call(1, 1, "read", "c", null, 2L).build());
        assertThat(report.anomalies()).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(AnomalyKind.COUNTER_OUT_OF_RANGE);
            assertThat(a.description()).contains("final value 2 outside [3, 5]")
                    .contains("1 acknowledged increments lost");
            assertThat(a.events()).hasSize(1);
        });
    }

    @Test
    void aFinalValueAboveEveryPossibleIncrementIsAnAnomalyToo() {
        CheckReport report = check.check(increments().call(1, 1, "read", "c", null, 6L).build());
        assertThat(report.anomalies()).singleElement()
                .satisfies(a -> assertThat(a.description()).contains("1 increments applied that were never made"));
    }

    @Test
    void withoutAFinalReadTheCounterCannotBeJudged() {
        assertThat(check.check(increments().build()).status()).isEqualTo(CheckReport.Status.UNKNOWN);
    }

    @Test
    @Timeout(10)
    void aFinalReadThatIsNotAnIntegerCannotBeJudged() {
        // 5.5 rounded down to 5 would be in [3, 5]; a read of "4" or [4] is no counter value either
        for (Object value : List.of(5.5, "4", List.of(4L), true)) {
            CheckReport report = check.check(increments().call(1, 1, "read", "c", null, value).build());
            assertThat(report.status()).as("final " + value).isEqualTo(CheckReport.Status.UNKNOWN);
            assertThat(report.note()).isEqualTo("no final read (ok, with an integer value) for [c]");
        }
    }

    @Test
    @Timeout(10)
    void twoAcknowledgedIncrementsThatWroteTheSameValueAreALostWriteEvenInRange() {
        // processes 1 and 2 both read 0 and wrote 1 (a lost update); process 3's increment timed out but applied
        // (wrote 2): the final 2 is inside [2, 3], yet one acknowledged increment was overwritten
        HistoryBuilder h = new HistoryBuilder()
                .invoke(1, 1, "increment", "c", null).invoke(2, 1, "increment", "c", null)
                .ok(1, 1, "increment", "c", 4L, 1L);
        var first = h.last();
        h.ok(2, 1, "increment", "c", 5L, 1L);
        var second = h.last();
        h.invoke(3, 1, "increment", "c", null).info(3, 1, "increment", "c", "timeout")
                .call(4, 1, "increment", "other", 1L, 1L)                     // another counter: its own values
                .call(0, 0, "read", "c", null, 2L).call(0, 1, "read", "other", null, 1L);
        CheckReport report = check.check(h.build());
        assertThat(report.anomalies()).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(AnomalyKind.LOST_WRITE);
            assertThat(a.resource()).isEqualTo("c");
            assertThat(a.description()).isEqualTo("increments by process 1 (op 1) and process 2 (op 1) both wrote 1: "
                    + "one acknowledged increment overwrote the other");
            assertThat(a.events()).containsExactly(first, second);
        });
        assertThat(report.note()).isEqualTo("0 resource(s) out of range, 1 acknowledged increments overwritten");
    }

    @Test
    void aHistoryWithoutIncrementsIsNotApplicable() {
        assertThat(check.check(new HistoryBuilder().build()).status()).isEqualTo(CheckReport.Status.NOT_APPLICABLE);
    }

    @Test
    void eachCounterIsJudgedOnItsOwn() {
        // together 3 acknowledged and 2 unknown increments, final total 3: in range; per counter c-0 lost two
        HistoryBuilder h = new HistoryBuilder()
                .call(1, 1, "increment", "c-0", 1L, 1L).call(1, 2, "increment", "c-0", 2L, 2L)
                .call(1, 3, "increment", "c-0", 3L, 3L)
                .invoke(2, 1, "increment", "c-1", null).info(2, 1, "increment", "c-1", "killed")
                .invoke(2, 2, "increment", "c-1", null).info(2, 2, "increment", "c-1", "killed")
                .call(0, 0, "read", "c-0", null, 1L).call(0, 1, "read", "c-1", null, 2L);
        CheckReport report = check.check(h.build());
        assertThat(report.anomalies()).singleElement().satisfies(a -> {
            assertThat(a.resource()).isEqualTo("c-0");
            assertThat(a.description()).contains("final value 1 outside [3, 3]");
        });
    }
}
