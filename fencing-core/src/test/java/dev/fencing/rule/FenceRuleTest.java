package dev.fencing.rule;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class FenceRuleTest {

    private static FencingToken t(long value, String holder) {
        return new FencingToken("r", value, holder);
    }

    @Test
    void nothingSeenYetAcceptsAnyToken() {
        assertThat(FenceRule.judge(false, 0, null, t(1, "a"))).isEqualTo(Verdict.ACCEPT_NEWER);
    }

    @Test
    void largerThanMaxSeenIsAccepted() {
        assertThat(FenceRule.judge(true, 33, "a", t(34, "b"))).isEqualTo(Verdict.ACCEPT_NEWER);
    }

    @Test
    void equalFromTheSameHolderIsAccepted() {
        assertThat(FenceRule.judge(true, 34, "b", t(34, "b"))).isEqualTo(Verdict.ACCEPT_SAME_HOLDER);
    }

    @Test
    void equalFromAnotherHolderIsRejected() {
        assertThat(FenceRule.judge(true, 34, "b", t(34, "c"))).isEqualTo(Verdict.REJECT_DUPLICATE);
        assertThat(FenceRule.judge(true, 34, null, t(34, "c"))).isEqualTo(Verdict.REJECT_DUPLICATE);
    }

    @Test
    void smallerIsRejectedAsStale() {
        assertThat(FenceRule.judge(true, 34, "b", t(33, "a"))).isEqualTo(Verdict.REJECT_STALE);
        assertThat(FenceRule.judge(true, 34, "b", t(33, "b"))).isEqualTo(Verdict.REJECT_STALE);
    }

    @Test
    void verdictsMapToCounterOutcomes() {
        assertThat(Verdict.ACCEPT_NEWER.outcome()).isEqualTo("accepted");
        assertThat(Verdict.ACCEPT_SAME_HOLDER.outcome()).isEqualTo("accepted");
        assertThat(Verdict.REJECT_STALE.outcome()).isEqualTo("stale");
        assertThat(Verdict.REJECT_DUPLICATE.outcome()).isEqualTo("duplicate");
        assertThat(Verdict.REJECT_STALE.accepted()).isFalse();
    }
}
