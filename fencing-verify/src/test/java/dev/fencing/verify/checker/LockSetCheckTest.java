package dev.fencing.verify.checker;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class LockSetCheckTest {

    private final LockSetCheck check = new LockSetCheck();

    @Test
    void everyAcknowledgedAddInTheFinalReadIsValid() {
        HistoryBuilder h = new HistoryBuilder()
                .call(1, 0, "add", "set", 1L, 1L)
                .call(2, 0, "add", "set", 2L, 2L)
                .invoke(3, 0, "add", "set", 3L).fail(3, 0, "add", "set", "stale token")
                .invoke(4, 0, "add", "set", 4L).info(4, 0, "add", "set", "timeout")
                .invoke(5, 0, "add", "set", 5L)                      // never completed: may be there or not
                .call(1, 1, "read", "set", null, List.of(1L, 4L, 2L));
        CheckReport report = check.check(h.build());

        assertThat(report.status()).isEqualTo(CheckReport.Status.CHECKED);
        assertThat(report.anomalies()).isEmpty();
        assertThat(report.figures()).containsEntry("acknowledged-adds", 2L).containsEntry("lost", 0L);
    }

    @Test
    void anAcknowledgedAddMissingFromTheFinalReadIsALostWrite() {
        HistoryBuilder h = new HistoryBuilder()
                .call(1, 0, "add", "set", 1L, 1L)
                .invoke(2, 0, "add", "set", 2L).ok(2, 0, "add", "set", 2L, 2L);
        var lostOk = h.last();
        h.call(3, 0, "add", "set", 3L, 3L)
                .call(1, 1, "read", "set", null, List.of(1L, 3L));
        CheckReport report = check.check(h.build());

        assertThat(report.anomalies()).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(AnomalyKind.LOST_WRITE);
            assertThat(a.resource()).isEqualTo("set");
            assertThat(a.description()).startsWith("add 2 by process 2 (op 0)");
            assertThat(a.events()).hasSize(2).contains(lostOk);
        });
        assertThat(report.figures()).containsEntry("lost", 1L);
    }

    @Test
    @Timeout(10)
    void aFailedAddInTheFinalReadIsAFailedWriteApplied() {
        // fail means it certainly did not apply (refused as stale): its element in the set means it did
        HistoryBuilder h = new HistoryBuilder()
                .call(1, 0, "add", "set", 5L, 1L)
                .invoke(2, 0, "add", "set", 2L).fail(2, 0, "add", "set", "stale: max_seen 5");
        var refused = h.last();
        h.invoke(3, 0, "add", "set", 3L).info(3, 0, "add", "set", "timeout")    // unknown: may be there
                .call(0, 0, "read", "set", null, List.of(1L, 2L, 3L));
        CheckReport report = check.check(h.build());
        assertThat(report.anomalies()).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(AnomalyKind.FAILED_WRITE_APPLIED);
            assertThat(a.resource()).isEqualTo("set");
            assertThat(a.description()).isEqualTo("add 2 by process 2 (op 0) failed (stale: max_seen 5) but is in "
                    + "the final read (process 0, op 0)");
            assertThat(a.events()).hasSize(2).contains(refused);
        });
        assertThat(report.figures()).containsEntry("lost", 0L).containsEntry("failed-but-applied", 1L);
        assertThat(report.note()).isEqualTo("0 of 1 acknowledged adds lost, 1 failed adds applied");
    }

    @Test
    void onlyTheLastReadCounts() {
        HistoryBuilder h = new HistoryBuilder()
                .call(1, 0, "add", "set", 1L, 1L)
                .call(2, 0, "read", "set", null, List.of())          // an early read, before the add applied
                .call(1, 1, "read", "set", null, List.of(1L));
        assertThat(check.check(h.build()).anomalies()).isEmpty();

        HistoryBuilder later = new HistoryBuilder()
                .call(1, 0, "add", "set", 1L, 1L)
                .call(2, 0, "read", "set", null, List.of(1L))
                .call(1, 1, "read", "set", null, List.of());         // the final read lost it
        assertThat(check.check(later.build()).anomalies()).hasSize(1);
    }

    @Test
    void setsOfDifferentResourcesAreJudgedApart() {
        HistoryBuilder h = new HistoryBuilder()
                .call(1, 0, "add", "a", 1L, 7L)
                .call(2, 0, "add", "b", 1L, 8L)
                .call(1, 1, "read", "a", null, List.of(7L))
                .call(1, 2, "read", "b", null, List.of(7L));
        assertThat(check.check(h.build()).anomalies()).extracting(Anomaly::resource).containsExactly("b");
    }

    @Test
    void withoutAFinalReadTheSetCannotBeJudged() {
        CheckReport report = check.check(new HistoryBuilder().call(1, 0, "add", "set", 1L, 1L).build());
        assertThat(report.status()).isEqualTo(CheckReport.Status.UNKNOWN);
        assertThat(report.note()).contains("no final read");
    }

    @Test
    void aHistoryWithoutAddsIsNotApplicable() {
        CheckReport report = check.check(new HistoryBuilder().call(1, 0, "increment", "c", 1L, null).build());
        assertThat(report.status()).isEqualTo(CheckReport.Status.NOT_APPLICABLE);
    }
}
