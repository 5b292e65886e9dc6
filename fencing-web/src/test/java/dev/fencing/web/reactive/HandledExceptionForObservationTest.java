package dev.fencing.web.reactive;

import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.handler.ExceptionHandlingWebHandler;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * WebFlux's server observation records the exception a WebExceptionHandler handled (ExceptionHandlingWebHandler puts
 * it in an exchange attribute, read when the request's observation stops), so the request's span carried a refusal's
 * message, holder id included. The handler leaves the observation a copy without it.
 */
class HandledExceptionForObservationTest {

    private final FencingWebExceptionHandler handler = new FencingWebExceptionHandler();

    private Object recordedAfterHandling(Throwable ex) {
        MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.post("/internal/ledger"));
        exchange.getAttributes().put(ExceptionHandlingWebHandler.HANDLED_WEB_EXCEPTION, ex);
        handler.handle(exchange, ex).block();
        assertThat(exchange.getResponse().getStatusCode()).as("answered").isNotNull();
        return exchange.getAttributes().get(ExceptionHandlingWebHandler.HANDLED_WEB_EXCEPTION);
    }

    @Test
    void aStaleTokensRecordedErrorNamesNoHolder() {
        StaleTokenException stale = new StaleTokenException("ledger", new FencingToken("ledger", 3, "zombie-holder"),
                4, "Ledger.write()");
        assertThat(stale.getMessage()).contains("zombie-holder");
        assertThat(recordedAfterHandling(stale)).isInstanceOf(StaleTokenException.class)
                .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.THROWABLE)
                .hasMessageNotContaining("zombie-holder").hasMessageContaining("not-recorded");
    }

    @Test
    void aLockTimeoutsRecordedErrorKeepsItsKindButNotItsMessage() {
        LockAcquisitionException timeout = new LockAcquisitionException("ledger",
                "Timed out after 300 ms waiting for the lock on resource 'ledger', held by mem-holder-1");
        assertThat(recordedAfterHandling(timeout)).isInstanceOf(LockAcquisitionException.class)
                .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.THROWABLE)
                .hasMessageNotContaining("mem-holder-1").hasMessageContaining("'ledger'");
    }

    @Test
    void anExceptionItDoesNotAnswerIsLeftAsRecorded() {
        IllegalStateException other = new IllegalStateException("not a fencing failure");
        MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.post("/internal/ledger"));
        exchange.getAttributes().put(ExceptionHandlingWebHandler.HANDLED_WEB_EXCEPTION, other);
        handler.handle(exchange, other).onErrorResume(e -> reactor.core.publisher.Mono.empty()).block();
        assertThat(exchange.getAttributes().get(ExceptionHandlingWebHandler.HANDLED_WEB_EXCEPTION)).isSameAs(other);
    }
}
