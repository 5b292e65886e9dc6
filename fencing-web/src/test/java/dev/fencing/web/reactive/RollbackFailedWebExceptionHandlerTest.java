package dev.fencing.web.reactive;

import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.store.FenceStoreException;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingExceptionAdvice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.transaction.TransactionSystemException;

import java.sql.SQLException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * As {@code RollbackFailedAdviceTest} on Spring MVC: the database connection lost during a fence check fails the
 * store and then the transaction's rollback (a blocking {@code @Transactional} service, or a reactive transaction,
 * which does the same), and Spring throws the rollback's {@link TransactionSystemException} with the store's failure
 * as its application exception. On WebFlux that was a 500 from Spring's default handling, where Spring MVC answers
 * the fence failure's own 503; any other rollback failure is left alone on both.
 */
@Timeout(30)
class RollbackFailedWebExceptionHandlerTest {

    private final FencingWebExceptionHandler handler = new FencingWebExceptionHandler();

    private static TransactionSystemException rollbackReplacing(Throwable replaced) {
        TransactionSystemException rollback = new TransactionSystemException("JDBC rollback failed",
                new SQLException("An I/O error occurred while sending to the backend", "08006"));
        if (replaced != null) {
            rollback.initApplicationException(replaced);
        }
        return rollback;
    }

    private MockServerWebExchange handled(Throwable ex) {
        MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.post("/internal/ledger"));
        handler.handle(exchange, ex).block();
        return exchange;
    }

    @Test
    void aStoreFailureReplacedByAFailedRollbackIsAnsweredAsTheStoreFailure() {
        MockServerWebExchange exchange = handled(rollbackReplacing(new FenceStoreException("ledger:7",
                new FencingToken("ledger:7", 3, "h"), "Fence store failed for resource 'ledger:7': connection lost",
                new SQLException("connection lost", "08006"))));
        assertThat(exchange.getResponse().getStatusCode().value()).isEqualTo(503);
        assertThat(exchange.getResponse().getBodyAsString().block())
                .contains(FencingExceptionAdvice.STORE_UNAVAILABLE_TYPE.toString(), "ledger:7")
                .doesNotContain("connection lost").doesNotContain("rollback");
    }

    @Test
    void aLockNotAcquiredReplacedByAFailedRollbackIsA503WithRetryAfter() {
        MockServerWebExchange exchange = handled(rollbackReplacing(new LockAcquisitionException("ledger:7",
                "Could not lock resource 'ledger:7': connection lost")));
        assertThat(exchange.getResponse().getStatusCode().value()).isEqualTo(503);
        assertThat(exchange.getResponse().getHeaders().getFirst("Retry-After")).isEqualTo("1");
        assertThat(exchange.getResponse().getBodyAsString().block())
                .contains(FencingExceptionAdvice.LOCK_NOT_ACQUIRED_TYPE.toString());
    }

    @Test
    void anyOtherRollbackFailureIsLeftToSpring() {
        for (Throwable replaced : new Throwable[] {new IllegalStateException("the body failed"), null}) {
            TransactionSystemException rollback = rollbackReplacing(replaced);
            MockServerWebExchange exchange = MockServerWebExchange.from(
                    MockServerHttpRequest.post("/internal/ledger"));
            assertThat(catchThrowable(() -> handler.handle(exchange, rollback).block())).isSameAs(rollback);
            assertThat(exchange.getResponse().getStatusCode()).isNull();
        }
    }
}
