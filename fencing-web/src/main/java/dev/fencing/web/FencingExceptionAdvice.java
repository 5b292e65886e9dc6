package dev.fencing.web;

import dev.fencing.context.MissingTokenException;
import dev.fencing.guard.InvalidKeyException;
import dev.fencing.guard.RemoteTokenSetAsideException;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.store.FenceStoreException;
import dev.fencing.web.internal.FencingProblems;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportSelector;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.util.ClassUtils;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.WebRequest;

import java.net.URI;

/**
 * Spring MVC answers for refused fenced writes, as RFC 9457 problem details, each with a title and the exception's
 * message as detail:
 * <ul>
 *   <li>400 Bad Request, "Invalid fencing key": the key could not be computed ({@code resource} as declared;
 *       problem {@code type} {@link #INVALID_KEY_TYPE});</li>
 *   <li>409 Conflict, "Stale fencing token", "Duplicate fencing token" or "Out-of-range fencing token": a stale,
 *       duplicate or out-of-range token ({@code resource}, {@code presented} without its signature, {@code maxSeen},
 *       {@code verdict};
 *       problem {@code type} {@link #STALE_TOKEN_TYPE}, {@link #DUPLICATE_TOKEN_TYPE} or
 *       {@link #OUT_OF_RANGE_TOKEN_TYPE});</li>
 *   <li>403 Forbidden, "Forged fencing token": the token failed signature verification ({@code resource},
 *       {@code presented} without its signature, {@code verdict}; problem {@code type} {@link #FORGED_TOKEN_TYPE});
 *       also answered by a verifying {@link FencingTokenFilter} before the request runs;</li>
 *   <li>428 Precondition Required, "Missing fencing token": no token for the resource ({@code resource};
 *       problem {@code type} {@link #MISSING_TOKEN_TYPE}), on a request a {@link FencingTokenFilter} covered; on
 *       any other request the token was the service's own (or its header was never read): 500, "Fencing token lost"
 *       ({@code resource}; problem {@code type} {@link #LOST_TOKEN_TYPE});</li>
 *   <li>503 Service Unavailable, "Fence store unavailable": the store could not decide ({@code resource}; problem
 *       {@code type} {@link #STORE_UNAVAILABLE_TYPE});</li>
 *   <li>503 Service Unavailable with {@code Retry-After: 1}, "Lock not acquired": the lock was not acquired in time
 *       or the lock service is unreachable ({@code resource}; problem {@code type} {@link #LOCK_NOT_ACQUIRED_TYPE});
 *       nothing ran, the request may be retried; 500, "Lock service broken", when no retry can help until the lock
 *       service's setup is repaired, such as a lease table dropped at runtime (problem {@code type}
 *       {@link #LOCK_SERVICE_BROKEN_TYPE}; the repair is logged at ERROR);</li>
 *   <li>503 Service Unavailable with {@code Retry-After: 1}, "Fence busy" / "Fence conflict": the store's check did
 *       not run because the fence row stayed locked, or the database aborted it (a
 *       {@link dev.fencing.store.TransientFenceFailure}, such as the JDBC store's {@code FenceBusyException} and
 *       {@code FenceConflictException}; {@code resource}, {@code reason}, {@code presented}). Answered by
 *       {@link FencingTransientFailureAdvice}, which this advice imports when spring-tx is on the classpath.</li>
 * </ul>
 * Two answers come from {@link FencingTokenFilter} before a request reaches Spring MVC: 400 "Malformed fencing token
 * header" and 403 "Untrusted fencing token".
 *
 * <p>Register it with {@code @Import(FencingExceptionAdvice.class)} (or component scanning): that also registers
 * {@link FencingTransientFailureAdvice} when spring-tx is present. Declared any other way (a {@code @Bean} method,
 * MockMvc's {@code standaloneSetup(..).setControllerAdvice(..)}), add {@code FencingTransientFailureAdvice} too.
 *
 * <p>Both advices are ordered {@link Ordered#LOWEST_PRECEDENCE}: an application's own {@code @ControllerAdvice} with
 * an {@code @Order}, or declared before them, is consulted first, and its handler wins for any exception it handles
 * (also through a supertype such as {@code Exception}). Spring picks the first advice that has a matching handler.
 */
@RestControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
@Import(FencingExceptionAdvice.TransientFailureAdviceSelector.class)
public class FencingExceptionAdvice {

    /**
     * The problem {@code type} of a 409 for a stale token. A URI that identifies the problem (it need not resolve):
     * {@link FencingTokenClientInterceptor} recognises the answer by it, never by the status alone.
     */
    public static final URI STALE_TOKEN_TYPE = FencingProblems.STALE_TOKEN_TYPE;

    /** The problem {@code type} of a 409 for a duplicate token (an equal token from another holder). */
    public static final URI DUPLICATE_TOKEN_TYPE = FencingProblems.DUPLICATE_TOKEN_TYPE;

    /**
     * The problem {@code type} of a 409 for a token further above max_seen than the store's {@code maxAdvance}
     * allows (taken as forged or corrupted).
     */
    public static final URI OUT_OF_RANGE_TOKEN_TYPE = FencingProblems.OUT_OF_RANGE_TOKEN_TYPE;

    /**
     * The problem {@code type} of a 409 for a token sent to a {@code @Fenced(acquire = true)} method of its resource
     * ({@link RemoteTokenSetAsideException}): a caller's mistake, not a verdict; {@link FencingTokenClientInterceptor}
     * leaves it to the client as an {@code HttpClientErrorException}.
     */
    public static final URI REMOTE_TOKEN_SET_ASIDE_TYPE = FencingProblems.REMOTE_TOKEN_SET_ASIDE_TYPE;

    /** The problem {@code type} of a 428 for a missing token (none bound for the resource). */
    public static final URI MISSING_TOKEN_TYPE = FencingProblems.MISSING_TOKEN_TYPE;

    /** The problem {@code type} of a 500 for a token the service lost (a request that sent none, filtered by none). */
    public static final URI LOST_TOKEN_TYPE = FencingProblems.LOST_TOKEN_TYPE;

    /**
     * The problem {@code type} of a 403 for a token that failed signature verification (unsigned where signatures
     * are required, an unknown or retired key, a signature that does not match): answered by
     * {@link FencingTokenFilter} before the request runs, or here for a {@link ForgedTokenException} from a fenced
     * call. Not a 409: the token is not outdated, it was never issued, and sending it again cannot succeed.
     */
    public static final URI FORGED_TOKEN_TYPE = FencingProblems.FORGED_TOKEN_TYPE;

    /** The problem {@code type} of a 400 "Invalid fencing key". */
    public static final URI INVALID_KEY_TYPE = FencingProblems.INVALID_KEY_TYPE;

    /** The problem {@code type} of a 503 "Fence store unavailable". */
    public static final URI STORE_UNAVAILABLE_TYPE = FencingProblems.STORE_UNAVAILABLE_TYPE;

    /** The problem {@code type} of a 503 "Lock not acquired" (sent with {@code Retry-After}). */
    public static final URI LOCK_NOT_ACQUIRED_TYPE = FencingProblems.LOCK_NOT_ACQUIRED_TYPE;

    /** The problem {@code type} of a 500 "Lock service broken": a retry does not help until it is repaired. */
    public static final URI LOCK_SERVICE_BROKEN_TYPE = FencingProblems.LOCK_SERVICE_BROKEN_TYPE;

    /** Seconds a client should wait before retrying a request that failed for a reason that passes. */
    static final long RETRY_AFTER_SECONDS = FencingProblems.RETRY_AFTER_SECONDS;

    /**
     * 409. On a request no {@link FencingTokenFilter} covered, the refused token was the service's own lock's, not
     * the caller's: the detail then names neither the method nor the holder id, and {@code presented} is left out;
     * so on a covered request whose caller sent tokens, none of them for the refused token's resource.
     */
    @ExceptionHandler(TokenRejectedException.class)
    public ProblemDetail rejected(TokenRejectedException e, WebRequest request) {
        return FencingProblems.rejected(e, request == null || callersToken(request, e));
    }

    /** Whether a {@link FencingTokenFilter} marked {@code request} as one whose caller may send tokens. */
    static boolean callerMaySend(WebRequest request) {
        return request.getAttribute(FencingTokenFilter.APPLIED_ATTRIBUTE, RequestAttributes.SCOPE_REQUEST) != null;
    }

    /**
     * Whether the token {@code e} refused was the caller's: its caller may send tokens and, when the filter bound
     * some, sent one for that resource; not a token of the service's own lock for another resource.
     */
    static boolean callersToken(WebRequest request, Throwable e) {
        return FencingProblems.callersToken(callerMaySend(request),
                request.getAttribute(FencingTokenFilter.BOUND_ATTRIBUTE, RequestAttributes.SCOPE_REQUEST), e);
    }

    /** 409 for {@code e}, without looking at the request. */
    public ProblemDetail rejected(TokenRejectedException e) {
        return FencingProblems.rejected(e);
    }

    /**
     * 403, "Forged fencing token": the token failed signature verification and never reached the store. The detail
     * names the resource only, never why verification failed or any key ({@code resource}, {@code presented} without
     * its signature, {@code verdict}; problem {@code type} {@link #FORGED_TOKEN_TYPE}). On a request no token filter
     * covered, the token was the service's own (refused by a service it called): a 500 with the cause logged at ERROR
     * and no holder id, since the caller can fix nothing.
     */
    @ExceptionHandler(ForgedTokenException.class)
    public ProblemDetail forged(ForgedTokenException e, WebRequest request) {
        return FencingProblems.rejected(e, request == null || callersToken(request, e));
    }

    /** 403 for {@code e}, without looking at the request. */
    public ProblemDetail forged(ForgedTokenException e) {
        return FencingProblems.forged(e);
    }

    /**
     * 428 on a request a {@link FencingTokenFilter} covered: the caller's token was missing; but when the caller did
     * send a token for that resource (the filter bound it on the request thread), the service lost it on a thread it
     * did not propagate to: 500 "Fencing token lost", logged at ERROR. On any other request the
     * token was the service's own and it lost it, or a header the caller sent was never read (the filter's URL
     * patterns do not cover the path, and the detail says so): 500 "Fencing token lost", the exception's message
     * (which names the method) logged at ERROR, not sent.
     */
    @ExceptionHandler(MissingTokenException.class)
    public ProblemDetail missing(MissingTokenException e, WebRequest request) {
        if (request == null) {
            return FencingProblems.missing(e, null);
        }
        if (request.getAttribute(FencingTokenFilter.BOUND_ATTRIBUTE, RequestAttributes.SCOPE_REQUEST)
                instanceof java.util.Set<?> sent && sent.contains(e.resource())) {
            return FencingProblems.lostAfterSent(e); // the caller sent it; a thread the service hopped to lacked it
        }
        boolean header = request.getHeader(FencingHeader.NAME) != null;
        return FencingProblems.missing(e, callerMaySend(request), header ? "no FencingTokenFilter covers this path "
                + "(with the Spring Boot starter: fencing.web.filter.url-patterns)" : null, false);
    }

    /** 428 for {@code e}, without looking at the request. */
    public ProblemDetail missing(MissingTokenException e) {
        return FencingProblems.missing(e, null);
    }

    /**
     * 409: the caller sent a token for a resource whose method acquires its own lock; nothing was locked or written.
     */
    @ExceptionHandler(RemoteTokenSetAsideException.class)
    public ProblemDetail remoteTokenSetAside(RemoteTokenSetAsideException e) {
        return FencingProblems.remoteTokenSetAside(e);
    }

    @ExceptionHandler(InvalidKeyException.class)
    public ProblemDetail invalidKey(InvalidKeyException e) {
        return FencingProblems.invalidKey(e);
    }

    /**
     * 503 (with {@code Retry-After} when the store was busy or in conflict), or 500 for a fenced write reached outside
     * the transaction its store checks in. The detail names the resource only: the exception's message (SQL, table
     * names, database errors) is logged here, never sent to the caller.
     */
    @ExceptionHandler(FenceStoreException.class)
    public ResponseEntity<ProblemDetail> storeFailed(FenceStoreException e, WebRequest request) {
        return FencingProblems.storeRefused(e, request == null || callersToken(request, e));
    }

    /** The answer to {@code e} without looking at the request. */
    public ResponseEntity<ProblemDetail> storeFailed(FenceStoreException e) {
        return FencingProblems.storeRefused(e);
    }

    /**
     * 503 with {@code Retry-After}, or a 500 when no retry can help ({@link LockAcquisitionException#retryable()}
     * false). The detail names the resource only: the exception's message (lock service addresses, timeouts, the
     * repair) is logged here, never sent to the caller.
     */
    @ExceptionHandler(LockAcquisitionException.class)
    public ResponseEntity<ProblemDetail> lockNotAcquired(LockAcquisitionException e) {
        return FencingProblems.of(e, null, false);
    }

    /** 503 with {@code Retry-After} and {@code problem} as body. */
    static ResponseEntity<ProblemDetail> retryLater(ProblemDetail problem) {
        return FencingProblems.retryLater(problem);
    }

    /**
     * Imports {@link FencingTransientFailureAdvice} only when spring-tx is present: its handler's signature names
     * Spring's {@code ConcurrencyFailureException}, so introspecting that class without spring-tx would fail with a
     * {@code NoClassDefFoundError}. Names the class as a string so that nothing here loads it.
     */
    static final class TransientFailureAdviceSelector implements ImportSelector {

        static final String SPRING_TX_MARKER = "org.springframework.dao.ConcurrencyFailureException";

        @Override
        public String[] selectImports(AnnotationMetadata importingClassMetadata) {
            return ClassUtils.isPresent(SPRING_TX_MARKER, TransientFailureAdviceSelector.class.getClassLoader())
                    ? new String[] {"dev.fencing.web.FencingTransientFailureAdvice"}
                    : new String[0];
        }
    }
}
