package dev.fencing.rule;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A rejection says whether the fenced body had run, and keeps saying so as it is named and copied. */
class TokenRejectedExceptionTest {

    private static final FencingToken TOKEN = new FencingToken("accounts:7", 33, "a");

    @Test
    void aRejectionBeforeTheBodyIsNotAfterItAndItsMessageSaysNothingOfACommit() {
        TokenRejectedException e = TokenRejectedException.of("accounts:7", TOKEN, 34, Verdict.REJECT_STALE);
        assertThat(e.afterBody()).isFalse();
        assertThat(e.getMessage()).doesNotContain("commit");
        assertThat(e.afterBody(false)).isSameAs(e);
    }

    @Test
    void aRejectionAtCommitKeepsItsKindFieldsAndFlagWhenNamedAtItsOperation() {
        for (Verdict verdict : new Verdict[] {Verdict.REJECT_STALE, Verdict.REJECT_DUPLICATE,
                Verdict.REJECT_OUT_OF_RANGE}) {
            TokenRejectedException before = TokenRejectedException.of("accounts:7", TOKEN, 34, verdict);
            TokenRejectedException atCommit = before.afterBody(true);
            TokenRejectedException named = atCommit.at("Repo.save(Account)");
            for (TokenRejectedException e : new TokenRejectedException[] {atCommit, named}) {
                assertThat(e).as(verdict.name()).isInstanceOf(before.getClass());
                assertThat(e.afterBody()).as(verdict.name()).isTrue();
                assertThat(e.getMessage()).as(verdict.name()).startsWith(before.getMessage().substring(0, 20))
                        .contains("checked at the transaction's commit, after the method ran");
                assertThat(e.presented()).isSameAs(TOKEN);
                assertThat(e.maxSeen()).isEqualTo(34);
                assertThat(e.verdict()).isEqualTo(verdict);
                assertThat(e.getStackTrace()).isEqualTo(before.getStackTrace());
            }
            assertThat(named.operation()).isEqualTo("Repo.save(Account)");
            assertThat(named.getMessage()).contains("Repo.save(Account)");
            assertThat(before.afterBody()).as("the original is unchanged").isFalse();
            assertThat(named.afterBody(false).afterBody()).isFalse();
        }
    }
}
