package dev.fencing.web;

import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.OutOfRangeTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.springframework.http.ProblemDetail;

import static org.assertj.core.api.Assertions.assertThat;

/** Each rejection answers 409 with a problem type and title of its own; out-of-range is not reported as stale. */
class RejectionProblemTest {

    private final FencingExceptionAdvice advice = new FencingExceptionAdvice();
    private final FencingToken token = new FencingToken("accounts:3", Long.MAX_VALUE, "evil");

    @Test
    void everyRejectionHasItsOwnTypeAndTitle() {
        ProblemDetail outOfRange = advice.rejected(new OutOfRangeTokenException("accounts:3", token, 7, "Repo.save()"));
        assertThat(outOfRange.getStatus()).isEqualTo(409);
        assertThat(outOfRange.getType()).isEqualTo(FencingExceptionAdvice.OUT_OF_RANGE_TOKEN_TYPE);
        assertThat(outOfRange.getTitle()).isEqualTo("Out-of-range fencing token");
        assertThat(outOfRange.getProperties()).containsEntry("verdict", "out-of-range").containsEntry("maxSeen", 7L);

        assertThat(advice.rejected(new StaleTokenException("accounts:3", token, 7)).getType())
                .isEqualTo(FencingExceptionAdvice.STALE_TOKEN_TYPE);
        assertThat(advice.rejected(new DuplicateTokenException("accounts:3", token, 7)).getType())
                .isEqualTo(FencingExceptionAdvice.DUPLICATE_TOKEN_TYPE);
    }
}
