package dev.fencing.web;

import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.OutOfRangeTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenSignature;
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

    /**
     * A token whose lock this process knows is lost: the answer says so, for the caller's own token and for the
     * service's (a trial's 409 said max_seen -1 and "a newer holder has written", neither true).
     */
    @Test
    void aLostLockSaysSoAndNotThatANewerHolderWrote() {
        FencingToken held = new FencingToken("accounts:3", 1117, "zk-1");
        StaleTokenException lost = StaleTokenException.lockLost("accounts:3", held, "Repo.save()");
        ProblemDetail callers = dev.fencing.web.internal.FencingProblems.rejected(lost, true);
        assertThat(callers.getStatus()).isEqualTo(409);
        assertThat(callers.getType()).isEqualTo(FencingExceptionAdvice.STALE_TOKEN_TYPE);
        assertThat(callers.getProperties()).containsEntry("lockLost", true).containsEntry("verdict", "stale");
        assertThat(callers.getDetail()).contains("whose lock this process knows is lost")
                .doesNotContain("a newer holder has written");
        ProblemDetail own = dev.fencing.web.internal.FencingProblems.rejected(lost, false);
        assertThat(own.getDetail()).contains("the lock this service took for it (token 1117) is lost")
                .contains("Retry the request").doesNotContain("max_seen is -1");
        assertThat(own.getProperties()).containsEntry("lockLost", true).doesNotContainKey("presented");
        assertThat(advice.rejected(new StaleTokenException("accounts:3", held, 1200)).getProperties())
                .doesNotContainKey("lockLost");
    }

    @Test
    void noProblemBodyCarriesAUsableSignedToken() {
        // a token refused as busy was never used and may be above max_seen: with its signature it would be a
        // credential handed to whoever made the request
        FencingToken signed = new FencingToken("accounts:9", 8, "jdbc-1")
                .withSignature(TokenSignature.of("2027-02", new byte[32]));
        for (ProblemDetail problem : new ProblemDetail[] {
                advice.rejected(new StaleTokenException("accounts:9", signed, 9)),
                advice.rejected(new DuplicateTokenException("accounts:9", signed, 8)),
                advice.rejected(new OutOfRangeTokenException("accounts:9", signed, 7, "Repo.save()")),
                new FencingTransientFailureAdvice().transientFailure(new Busy(signed)).getBody()}) {
            assertThat(problem.getProperties()).containsEntry("presented", "accounts:9#8@jdbc-1");
            assertThat(String.valueOf(problem.getDetail())).doesNotContain("AAAAAAAAAA");
        }
        assertThat(signed.toString()).isEqualTo("accounts:9#8@jdbc-1!2027-02.\u2026")
                .doesNotContain(signed.signature().toText().substring(8));
    }

    @Test
    void aFailureAfterTheBodyRanDoesNotSayTheCallDidNotRun() {
        FencingToken presented = new FencingToken("accounts:9", 8, "jdbc-1");
        ProblemDetail before = new FencingTransientFailureAdvice().transientFailure(new Busy(presented, false))
                .getBody();
        assertThat(before.getDetail()).contains("the call did not run");
        assertThat(before.getProperties()).containsEntry("afterBody", false);

        ProblemDetail after = new FencingTransientFailureAdvice().transientFailure(new Busy(presented, true)).getBody();
        assertThat(after.getStatus()).isEqualTo(503);
        assertThat(after.getDetail()).doesNotContain("did not run").contains("the call had run")
                .contains("outside the database, too");
        assertThat(after.getProperties()).containsEntry("afterBody", true);
    }

    /** What a store throws when the fence row stays locked. */
    private static final class Busy extends org.springframework.dao.PessimisticLockingFailureException
            implements dev.fencing.store.TransientFenceFailure {
        private final FencingToken presented;
        private final boolean afterBody;

        Busy(FencingToken presented) {
            this(presented, false);
        }

        Busy(FencingToken presented, boolean afterBody) {
            super("lock wait timeout");
            this.presented = presented;
            this.afterBody = afterBody;
        }

        @Override
        public boolean afterBody() {
            return afterBody;
        }

        @Override
        public Reason reason() {
            return Reason.BUSY;
        }

        @Override
        public String resource() {
            return presented.resource();
        }

        @Override
        public FencingToken presented() {
            return presented;
        }
    }
}
