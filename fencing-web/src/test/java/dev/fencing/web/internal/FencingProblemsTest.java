package dev.fencing.web.internal;

import dev.fencing.context.MissingTokenException;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.guard.InvalidKeyException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.store.FenceStoreException;
import dev.fencing.store.OutsideTransactionException;
import dev.fencing.store.TransientFenceFailure;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** How a store's refusals are answered: transient ones retryable, a missing transaction a setup error, others 503. */
class FencingProblemsTest {

    private static final FencingToken TOKEN = new FencingToken("accounts:1", 7, "a");

    /** A store exception that is also transient, as the R2DBC store's busy and conflict refusals are. */
    static final class BusyStore extends FenceStoreException implements TransientFenceFailure {
        BusyStore() {
            super("accounts:1", TOKEN, "lock wait of 5 s on fencing_max_seen exceeded", null);
        }

        @Override
        public Reason reason() {
            return Reason.BUSY;
        }
    }

    @Test
    void aTransientStoreRefusalIsRetryableWithRetryAfterWhicheverWayItIsReached() {
        for (ResponseEntity<ProblemDetail> answer : new ResponseEntity[] {
                FencingProblems.of(new BusyStore(), null), FencingProblems.storeRefused(new BusyStore())}) {
            assertThat(answer.getStatusCode().value()).isEqualTo(503);
            assertThat(answer.getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("1");
            assertThat(answer.getBody().getTitle()).isEqualTo("Fence busy");
            assertThat(answer.getBody().getDetail()).doesNotContain("fencing_max_seen");
        }
    }

    @Test
    void aTransientRefusalHasItsTypeAndShowsTheTokenOnlyToACallerThatMaySendOne() {
        ProblemDetail callers = FencingProblems.of(new BusyStore(), null, false, true).getBody();
        assertThat(callers.getType()).isEqualTo(FencingProblems.FENCE_BUSY_TYPE);
        assertThat(callers.getProperties()).containsEntry("presented", TOKEN.unsigned().toText());
        for (ResponseEntity<ProblemDetail> own : List.of(FencingProblems.of(new BusyStore(), null, true, false),
                FencingProblems.storeRefused(new BusyStore(), false))) {
            assertThat(own.getBody().getType()).isEqualTo(FencingProblems.FENCE_BUSY_TYPE);
            assertThat(own.getBody().getProperties()).doesNotContainKey("presented")
                    .containsEntry("resource", "accounts:1").containsEntry("afterBody", false);
        }
    }

    @Test
    void aRejectionAtCommitSaysTheCallHadRunAndAnEarlierOneThatItDidNot() {
        TokenRejectedException before = TokenRejectedException.of("accounts:1", TOKEN, 9, Verdict.REJECT_STALE);
        TokenRejectedException atCommit = before.afterBody(true);
        assertThat(FencingProblems.rejected(before, true).getProperties()).containsEntry("afterBody", false);
        assertThat(FencingProblems.rejected(atCommit, true).getProperties()).containsEntry("afterBody", true);
        assertThat(FencingProblems.rejected(atCommit, true).getDetail())
                .contains("checked at the transaction's commit");
        assertThat(FencingProblems.rejected(before, false).getDetail()).contains("did not run")
                .doesNotContain("had run")
                // the service's own token, however it was bound; a counter reset is named beside a newer holder
                .contains("the token this service presented (" + TOKEN.value() + ", its own, not the caller's)")
                .contains("a newer holder has written, or the lock service's counter is behind max_seen");
        // out-of-range is a token too far ahead, not behind (a trial read the stale explanation on it)
        assertThat(FencingProblems.rejected(TokenRejectedException.of("accounts:1", TOKEN, 9,
                Verdict.REJECT_OUT_OF_RANGE), false).getDetail())
                .contains("further above max_seen than the store's bound on one advance (maxAdvance)")
                .doesNotContain("a newer holder has written");
        assertThat(FencingProblems.rejected(atCommit, false).getDetail()).contains("had run")
                .contains("what it did outside the database, too").doesNotContain("did not run");
    }

    @Test
    void aWriteOutsideATransactionIsA500NamingTheResourceNotTheMessage() {
        ResponseEntity<ProblemDetail> answer = FencingProblems.of(new OutsideTransactionException("accounts:1", TOKEN,
                "R2dbcFenceStore refused: no reactive transaction on ConnectionFactory pool-7"), null);
        assertThat(answer.getStatusCode().value()).isEqualTo(500);
        assertThat(answer.getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isNull();
        assertThat(answer.getBody().getType()).isEqualTo(FencingProblems.NO_TRANSACTION_TYPE);
        assertThat(answer.getBody().getTitle()).isEqualTo("Fenced write outside a transaction");
        assertThat(answer.getBody().getDetail()).contains("accounts:1").doesNotContain("pool-7");
    }

    @Test
    void anyOtherStoreFailureIsA503WithoutRetryAfter() {
        ResponseEntity<ProblemDetail> answer = FencingProblems.of(
                new FenceStoreException("accounts:1", TOKEN, "connection refused", null), null);
        assertThat(answer.getStatusCode().value()).isEqualTo(503);
        assertThat(answer.getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isNull();
        assertThat(answer.getBody().getTitle()).isEqualTo("Fence store unavailable");
        assertThat(answer.getBody().getType()).isEqualTo(FencingProblems.STORE_UNAVAILABLE_TYPE);
    }

    /**
     * The service's own token refused as forged downstream is its setup fault: a 500 that names no holder, not a 403
     * blaming its caller with the service's holder id (a signing trial).
     */
    @Test
    void theServicesOwnTokenRefusedAsForgedIsA500WithoutTheHolder() {
        dev.fencing.rule.ForgedTokenException forged = new dev.fencing.rule.ForgedTokenException("ledger:12", TOKEN,
                "it is signed with key 'k2', which this fence does not know", "POST /internal/ledger/12");
        ProblemDetail own = FencingProblems.rejected(forged, false);
        assertThat(own.getStatus()).isEqualTo(500);
        assertThat(own.getType()).isEqualTo(FencingProblems.FORGED_TOKEN_TYPE);
        assertThat(own.getProperties()).doesNotContainKey("presented").containsEntry("resource", "ledger:12");
        assertThat(own.getDetail()).contains("its own").doesNotContain("k2");
        ProblemDetail callers = FencingProblems.rejected(forged, true);
        assertThat(callers.getStatus()).isEqualTo(403);
        assertThat(callers.getProperties()).containsKey("presented");
    }

    @Test
    void everyAnswerHasAProblemType() {
        List<Throwable> failures = List.of(
                new InvalidKeyException("accounts", "key #id of deposit(long) is null"),
                new FenceStoreException("accounts:1", TOKEN, "connection refused", null),
                new LockAcquisitionException("accounts:1", "not within 10000 ms"),
                new LockAcquisitionException("accounts:1", "lease table gone", null, false));
        for (Throwable failure : failures) {
            for (boolean reactive : new boolean[] {false, true}) {
                assertThat(FencingProblems.of(failure, null, reactive).getBody().getType())
                        .as(failure + (reactive ? " (reactive)" : "")).isNotNull()
                        .isNotEqualTo(java.net.URI.create("about:blank"));
            }
        }
    }

    @Test
    void aLockThatNoRetryCanTakeIsA500NamingNeitherTableNorRepairWhileAnOutageIsA503ToRetry() {
        ResponseEntity<ProblemDetail> broken = FencingProblems.of(new LockAcquisitionException("accounts:1",
                "the lease table 'fencing_lease' is missing or unusable now", null, false), null, false);
        assertThat(broken.getStatusCode().value()).isEqualTo(500);
        assertThat(broken.getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isNull();
        assertThat(broken.getBody().getType()).isEqualTo(FencingProblems.LOCK_SERVICE_BROKEN_TYPE);
        assertThat(broken.getBody().getDetail()).contains("accounts:1", "a retry does not help")
                .doesNotContain("fencing_lease");

        ResponseEntity<ProblemDetail> outage = FencingProblems.of(new LockAcquisitionException("accounts:1",
                "not within 10000 ms"), null, false);
        assertThat(outage.getStatusCode().value()).isEqualTo(503);
        assertThat(outage.getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("1");
        assertThat(outage.getBody().getType()).isEqualTo(FencingProblems.LOCK_NOT_ACQUIRED_TYPE);
    }

    @Test
    void theReactive428NamesContextWriteAndTheWebFilterWhileTheServletOneKeepsFencingContextBind() {
        MissingTokenException missing = new MissingTokenException("accounts:1", "deposit");
        String reactive = FencingProblems.of(missing, null, true).getBody().getDetail();
        assertThat(reactive).contains("contextWrite(ReactiveFencing.bind(token))", "FencingTokenWebFilter",
                "accounts:1").doesNotContain("FencingContext.bind");
        assertThat(FencingProblems.of(missing, null).getBody().getDetail()).contains("FencingContext.bind(...)")
                .doesNotContain("contextWrite");
        assertThat(FencingProblems.of(missing, "no FencingTokenWebFilter is registered in this application", true)
                .getBody().getDetail()).contains("header was not read: no FencingTokenWebFilter is registered");
    }

    /**
     * The 428 of a reactive chain's refusal gave the reactive advice twice: the exception's own message names
     * contextWrite and the WebFilter, and the answer appended the same advice again ("; on the reactive stack, ...").
     */
    @Test
    @org.junit.jupiter.api.Timeout(10)
    void aReactiveChainsRefusalGivesTheReactiveAdviceOnce() {
        MissingTokenException e = MissingTokenException.inReactiveChain("accounts:1", "Ledger.pay(long)", List.of());
        String detail = FencingProblems.missingReactive(e, null).getDetail();
        assertThat(detail).contains("Ledger.pay(long)", "FencingTokenWebFilter");
        assertThat(detail.split(java.util.regex.Pattern.quote("ReactiveFencing.bind(token)"), -1)).hasSize(2);
        String log = FencingProblems.lostLog(e, null, true);
        assertThat(log.split(java.util.regex.Pattern.quote("ReactiveFencing.bind(token)"), -1)).hasSize(2);
    }

    /**
     * A token lost on the reactive stack is logged with the reactive advice: FencingContext.bind(...) is what a user
     * of a @Transactional reactive service already did, and it binds nothing the pipeline reads when it subscribes.
     */
    @Test
    void aLostTokenIsLoggedWithTheAdviceOfTheStackItWasLostOn() {
        MissingTokenException e = new MissingTokenException("accounts:1", "Ledger.pay(long)");
        assertThat(e.getMessage()).contains(FencingProblems.SERVLET_ADVICE);
        assertThat(FencingProblems.lostLog(e, null, false)).contains("Ledger.pay(long)")
                .contains("FencingContext.bind(...)").doesNotContain("contextWrite");
        assertThat(FencingProblems.lostLog(e, null, true)).contains("Ledger.pay(long)")
                .doesNotContain(FencingProblems.SERVLET_ADVICE)
                .contains("contextWrite(ReactiveFencing.bind(token))")
                .contains("a @Transactional reactive service subscribes later");
        assertThat(FencingProblems.missing(e, false, null, true).getStatus()).isEqualTo(500);
    }

    /**
     * A lock taken under a key written one way (a Kotlin value class's underlying value, 1) and checked under another
     * (its boxed text): the 500's detail says which resources did have tokens, not only that none was acquired.
     */
    @Test
    void aLostTokensDetailNamesTheResourcesThatHadTokens() {
        MissingTokenException e = new MissingTokenException("accounts:AccountId(v=1)", "Ledger.pay(AccountId)",
                List.of("accounts:1"));
        assertThat(e.boundResources()).containsExactly("accounts:1");
        assertThat(FencingProblems.lost(e, null).getDetail())
                .contains("it had tokens bound only for 'accounts:1'").contains("a key written another way");
        assertThat(FencingProblems.lost(new MissingTokenException("accounts:1", "Ledger.pay(long)"), null)
                .getDetail()).doesNotContain("bound only for");
    }

    /**
     * A token lost in the service is a 500 on every request, logged at ERROR once a minute per method (a trial's 30
     * tokenless requests logged 30 lines), the next line saying how many it held back.
     */
    @Test
    void aLostTokensErrorLineIsPacedPerMethod() {
        String operation = "Ledger.paced" + System.nanoTime() + "(long)";
        try (dev.fencing.testsupport.LogRecords logs = dev.fencing.testsupport.LogRecords.of(FencingProblems.class)) {
            for (int i = 0; i < 3; i++) {
                assertThat(FencingProblems.lost(new MissingTokenException("accounts:1", operation), null).getStatus())
                        .isEqualTo(500);
            }
            FencingProblems.lost(new MissingTokenException("accounts:1", operation + "Other"), null);
            assertThat(logs.records()).extracting(java.util.logging.LogRecord::getMessage)
                    .filteredOn(m -> m.contains(operation)).hasSize(2)
                    .anySatisfy(m -> assertThat(m).contains(operation + "Other"));
        }
    }
}
