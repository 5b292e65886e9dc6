package dev.fencing.web;

import dev.fencing.context.MissingTokenException;
import dev.fencing.guard.InvalidKeyException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.store.FenceStoreException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Spring MVC answers for refused fenced writes, as RFC 9457 problem details: a stale or duplicate token is
 * 409 Conflict (with {@code resource}, {@code presented} and {@code maxSeen}), a missing token 428 Precondition
 * Required (with {@code resource}), an uncomputable key 400 Bad Request (with the {@code resource} as declared), a
 * store that could not decide 503 Service Unavailable (with {@code resource}); each with a title and the exception's
 * message as detail. Import it ({@code @Import}) to use it.
 */
@RestControllerAdvice
public class FencingExceptionAdvice {

    @ExceptionHandler(TokenRejectedException.class)
    public ProblemDetail stale(TokenRejectedException e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, e.getMessage());
        problem.setTitle("Stale fencing token");
        problem.setProperty("resource", e.resource());
        problem.setProperty("presented", e.presented().toText());
        problem.setProperty("maxSeen", e.maxSeen());
        problem.setProperty("verdict", e.verdict().outcome());
        return problem;
    }

    @ExceptionHandler(MissingTokenException.class)
    public ProblemDetail missing(MissingTokenException e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.PRECONDITION_REQUIRED, e.getMessage());
        problem.setTitle("Missing fencing token");
        problem.setProperty("resource", e.resource());
        return problem;
    }

    @ExceptionHandler(InvalidKeyException.class)
    public ProblemDetail invalidKey(InvalidKeyException e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, e.getMessage());
        problem.setTitle("Invalid fencing key");
        problem.setProperty("resource", e.resource());
        return problem;
    }

    @ExceptionHandler(FenceStoreException.class)
    public ProblemDetail storeFailed(FenceStoreException e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE, e.getMessage());
        problem.setTitle("Fence store unavailable");
        problem.setProperty("resource", e.resource());
        return problem;
    }
}
