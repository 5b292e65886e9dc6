package dev.fencing.rule;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The rule with a bound on one advance: the edge of the bound, the first token, and that the other rows stay. */
class BoundedAdvanceRuleTest {

    private static FencingToken t(long value, String holder) {
        return new FencingToken("r", value, holder);
    }

    @Test
    void advanceUpToTheBoundIsAcceptedOneMoreIsOutOfRange() {
        assertThat(FenceRule.judge(true, 100, "a", t(110, "b"), 10)).isEqualTo(Verdict.ACCEPT_NEWER);
        assertThat(FenceRule.judge(true, 100, "a", t(111, "b"), 10)).isEqualTo(Verdict.REJECT_OUT_OF_RANGE);
        assertThat(FenceRule.judge(true, 1, "a", t(Long.MAX_VALUE, "evil"), 1_000_000))
                .isEqualTo(Verdict.REJECT_OUT_OF_RANGE);
    }

    @Test
    void firstTokenHasNothingToCompareAgainstAndIsAccepted() {
        assertThat(FenceRule.judge(false, 0, null, t(Long.MAX_VALUE, "x"), 10)).isEqualTo(Verdict.ACCEPT_NEWER);
    }

    @Test
    void staleDuplicateAndSameHolderAreUnchangedByTheBound() {
        assertThat(FenceRule.judge(true, 100, "a", t(5, "b"), 10)).isEqualTo(Verdict.REJECT_STALE);
        assertThat(FenceRule.judge(true, 100, "a", t(100, "b"), 10)).isEqualTo(Verdict.REJECT_DUPLICATE);
        assertThat(FenceRule.judge(true, 100, "a", t(100, "a"), 10)).isEqualTo(Verdict.ACCEPT_SAME_HOLDER);
    }

    @Test
    void unboundedAcceptsAnyAdvanceAndTheBoundMustBePositive() {
        assertThat(FenceRule.judge(true, 1, "a", t(Long.MAX_VALUE, "b"), FenceRule.UNBOUNDED))
                .isEqualTo(Verdict.ACCEPT_NEWER);
        assertThatThrownBy(() -> FenceRule.checkMaxAdvance("Store", 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Store maxAdvance")
                .hasMessageContaining("0");
    }

    @Test
    void outOfRangeRejectionNamesResourceValuesAndOperationAndKeepsItsTypeWhenNamed() {
        TokenRejectedException e = TokenRejectedException.of("r", t(500, "evil"), 100, Verdict.REJECT_OUT_OF_RANGE);
        assertThat(e).isInstanceOf(OutOfRangeTokenException.class);
        assertThat(e.verdict().outcome()).isEqualTo("out-of-range");
        TokenRejectedException named = e.at("Repo.save(Account)");
        assertThat(named).isInstanceOf(OutOfRangeTokenException.class)
                .hasMessageContaining("'r'").hasMessageContaining("Repo.save(Account)")
                .hasMessageContaining("500").hasMessageContaining("100");
    }
}
