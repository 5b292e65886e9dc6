package dev.fencing.web;

import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.store.FenceStoreException;
import dev.fencing.store.TransientFenceFailure;
import dev.fencing.web.internal.FencingProblems;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;


/**
 * Answers a fence check that did not run for a reason that passes (a {@link TransientFenceFailure}: the JDBC store's
 * {@code FenceBusyException} and {@code FenceConflictException}, which are Spring
 * {@link ConcurrencyFailureException}s) with 503 Service Unavailable, {@code Retry-After: 1} and a problem detail:
 * type {@code https://fencing.dev/problems/fence-busy} or {@code .../fence-conflict}, title "Fence busy" or "Fence
 * conflict", a detail naming the resource (the exception's message is logged, never sent), {@code resource},
 * {@code reason} ({@code busy} or {@code conflict}), {@code afterBody} and, on a request a token filter covered,
 * {@code presented} (without its signature; on any other request the token was the service's own lock's).
 *
 * <p>Any other {@code ConcurrencyFailureException} (the application's own optimistic locking, say) is rethrown
 * unchanged: Spring MVC then treats it as if this advice had no handler for it, and its other exception resolvers
 * ({@code @ResponseStatus}, the servlet container's error handling) apply. Ordered
 * {@link Ordered#LOWEST_PRECEDENCE}, so an application's own ordered {@code @ControllerAdvice} handling
 * {@code ConcurrencyFailureException} (or a supertype) comes first.
 *
 * <p>A fence failure that Spring's transaction interceptor replaced with a {@link TransactionSystemException}
 * (the rollback after it failed too, as it does when the database connection is lost during the check) gets the
 * fence failure's own answer: 503 "Fence store unavailable", "Fence busy"/"Fence conflict" or "Lock not acquired".
 * Any other {@code TransactionSystemException} is rethrown unchanged.
 *
 * <p>Needs spring-tx on the classpath (an optional dependency of this module). {@link FencingExceptionAdvice}
 * imports it when spring-tx is present; register it yourself only where {@code FencingExceptionAdvice} is declared
 * without {@code @Import} (a {@code @Bean} method, MockMvc's standalone setup).
 */
@RestControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class FencingTransientFailureAdvice {

    @ExceptionHandler(ConcurrencyFailureException.class)
    public ResponseEntity<ProblemDetail> transientFailure(ConcurrencyFailureException e, WebRequest request) {
        if (!(e instanceof TransientFenceFailure failure)) {
            throw e;     // not a fence's: Spring MVC's other resolvers and the application's own handling apply
        }
        // the message (database errors, SQL) stays in the server's log; the caller learns what to do; on a request
        // no token filter covered, the token was the service's own lock's and is left out, as a 409 leaves it out
        return FencingProblems.retryLater(FencingProblems.transientFailure(failure, e.getMessage(),
                request == null || FencingExceptionAdvice.callersToken(request, e)));
    }

    /**
     * The answer to the fence failure a failed rollback replaced: when the database connection breaks during the
     * check, the store fails and the transaction's rollback fails after it, and Spring throws the rollback's
     * exception with the store's as its {@linkplain TransactionSystemException#getApplicationException() application
     * exception}. Anything else is rethrown unchanged.
     */
    @ExceptionHandler(TransactionSystemException.class)
    public ResponseEntity<ProblemDetail> rollbackFailed(TransactionSystemException e, WebRequest request) {
        Throwable replaced = e.getApplicationException();
        boolean callerMaySend = request == null || FencingExceptionAdvice.callersToken(request, replaced);
        if (replaced instanceof TransientFenceFailure && replaced instanceof ConcurrencyFailureException failure) {
            return transientFailure(failure, request);
        }
        if (replaced instanceof FenceStoreException store) {
            return FencingProblems.storeRefused(store, callerMaySend);
        }
        if (replaced instanceof LockAcquisitionException notAcquired) {
            return FencingProblems.of(notAcquired, null, false);
        }
        throw e;     // not a fence's: Spring MVC's other resolvers and the application's own handling apply
    }

    /** The answer to {@code e} without looking at the request: {@code presented} included. */
    public ResponseEntity<ProblemDetail> transientFailure(ConcurrencyFailureException e) {
        return transientFailure(e, null);
    }
}
