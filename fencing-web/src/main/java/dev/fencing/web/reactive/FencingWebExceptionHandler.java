package dev.fencing.web.reactive;

import dev.fencing.context.MissingTokenException;
import dev.fencing.guard.CheckOutcomes;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.store.FenceStoreException;
import dev.fencing.web.FencingExceptionAdvice;
import dev.fencing.web.FencingHeader;
import dev.fencing.web.internal.FencingProblems;
import org.springframework.core.Ordered;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.util.ClassUtils;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import org.springframework.web.server.handler.ExceptionHandlingWebHandler;
import reactor.core.publisher.Mono;

import java.util.Set;

/**
 * WebFlux answers for the library's exceptions, as RFC 9457 problem details ({@code application/problem+json}): the
 * same statuses, problem types, titles, details, properties and {@code Retry-After} headers as the servlet
 * {@link FencingExceptionAdvice} and {@code FencingTransientFailureAdvice} (409 stale, duplicate, out-of-range and
 * remote-token-set-aside, 403 forged, 428 missing, 400 invalid key, 503 store failure, 503 lock not acquired and
 * transient busy/conflict, these two with {@code Retry-After: 1}; a store or lock failure a failed rollback
 * replaced is answered as itself), for errors a reactive controller, router function or filter throws or
 * signals. Any other error is passed on untouched, as is one whose response is already committed.
 *
 * <p>Register it with {@code @Import(FencingWebExceptionHandler.class)} or as a bean: WebFlux's
 * {@code WebHttpHandlerBuilder.applicationContext(..)} picks up every {@link WebExceptionHandler} bean. It is ordered
 * {@value #ORDER}, before Spring Boot's error handler (-1) and WebFlux's own (0); an application's
 * {@code @ControllerAdvice} handling an exception for a controller runs earlier still, inside the dispatcher, and wins.
 * A servlet application never calls a {@code WebExceptionHandler}, so importing it there changes nothing.
 */
public final class FencingWebExceptionHandler implements WebExceptionHandler, Ordered {

    /** The order of this handler among the {@link WebExceptionHandler}s. */
    public static final int ORDER = -2;

    /** Whether spring-tx, whose rollback failure can replace a fence failure, is on the class path. */
    private static final boolean TRANSACTIONS = ClassUtils.isPresent(
            "org.springframework.transaction.TransactionSystemException",
            FencingWebExceptionHandler.class.getClassLoader());

    /**
     * Loaded only with spring-tx: the fence failure a failed rollback replaced. When the database connection breaks
     * during a fence check, the store fails and the transaction's rollback fails after it, and Spring (a blocking
     * {@code @Transactional} method, or a reactive transaction) signals the rollback's exception with the store's as
     * its application exception; answered as the store's (a 503), as {@code FencingTransientFailureAdvice} answers it.
     */
    private static final class Rollbacks {

        static Throwable replaced(Throwable ex) {
            if (ex instanceof org.springframework.transaction.TransactionSystemException rollback
                    && (rollback.getApplicationException() instanceof FenceStoreException
                    || rollback.getApplicationException() instanceof LockAcquisitionException)) {
                return rollback.getApplicationException();
            }
            return ex;
        }
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
        boolean header = exchange.getRequest().getHeaders().containsHeader(FencingHeader.NAME);
        boolean callerMaySend = exchange.getAttribute(FencingTokenWebFilter.APPLIED_ATTRIBUTE) != null;
        ResponseEntity<ProblemDetail> answer;
        if (ex instanceof MissingTokenException missing
                && exchange.getAttribute(FencingTokenWebFilter.BOUND_ATTRIBUTE) instanceof Set<?> sent
                && sent.contains(missing.resource())) {
            // the caller sent it; the write ran where the request's Reactor Context did not reach
            ProblemDetail problem = FencingProblems.lostAfterSent(missing, true);
            answer = ResponseEntity.status(problem.getStatus()).body(problem);
        } else if (ex instanceof MissingTokenException missing) {
            ProblemDetail problem = FencingProblems.missing(missing, callerMaySend,
                    header ? "no FencingTokenWebFilter is registered in this application" : null, true);
            answer = ResponseEntity.status(problem.getStatus()).body(problem);
        } else {
            // a fence failure a failed rollback replaced is answered as itself, as on Spring MVC
            Throwable failure = TRANSACTIONS ? Rollbacks.replaced(ex) : ex;
            // a token of the service's own lock for a resource the caller sent none for is the service's
            boolean callers = FencingProblems.callersToken(callerMaySend,
                    exchange.getAttribute(FencingTokenWebFilter.BOUND_ATTRIBUTE), failure);
            if (failure instanceof TokenRejectedException rejected) {
                ProblemDetail problem = FencingProblems.rejected(rejected, callers);
                answer = ResponseEntity.status(problem.getStatus()).body(problem);
            } else {
                answer = FencingProblems.of(failure, null, true, callers);
            }
        }
        ServerHttpResponse response = exchange.getResponse();
        if (answer == null || answer.getBody() == null || response.isCommitted()) {
            return Mono.error(ex);
        }
        // WebFlux's server observation records the handled exception on the request's span; a refusal's message
        // names the holder, which no span may carry (the fencing spans leave it out too)
        if (exchange.getAttributes().get(ExceptionHandlingWebHandler.HANDLED_WEB_EXCEPTION) == ex) {
            exchange.getAttributes().put(ExceptionHandlingWebHandler.HANDLED_WEB_EXCEPTION,
                    CheckOutcomes.forObservation(ex));
        }
        byte[] body = FencingProblems.json(answer.getBody());
        response.setStatusCode(answer.getStatusCode());
        response.getHeaders().putAll(answer.getHeaders());
        response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        response.getHeaders().setContentLength(body.length);
        return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(body)));
    }
}
