package dev.fencing.web.internal;

import dev.fencing.guard.LogPace;

import dev.fencing.context.MissingTokenException;
import dev.fencing.guard.InvalidKeyException;
import dev.fencing.guard.RemoteTokenSetAsideException;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.store.FenceStoreException;
import dev.fencing.store.OutsideTransactionException;
import dev.fencing.store.TransientFenceFailure;
import dev.fencing.token.FencingToken;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The one place that says how the library's exceptions and header refusals look over HTTP, for the servlet and the
 * WebFlux parts alike: status, problem {@code type}, title, detail, properties and headers of each RFC 9457 answer, and
 * its JSON text where no message converter writes it. Internal to fencing-web, not an API for applications: use
 * {@code FencingExceptionAdvice} (servlet) or {@code FencingWebExceptionHandler} (WebFlux).
 */
public final class FencingProblems {

    private static final Log log = LogFactory.getLog(FencingProblems.class);

    /** The problem {@code type} of a 409 for a stale token. */
    public static final URI STALE_TOKEN_TYPE = URI.create("https://fencing.dev/problems/stale-token");

    /** The problem {@code type} of a 409 for a duplicate token. */
    public static final URI DUPLICATE_TOKEN_TYPE = URI.create("https://fencing.dev/problems/duplicate-token");

    /** The problem {@code type} of a 409 for an out-of-range token. */
    public static final URI OUT_OF_RANGE_TOKEN_TYPE = URI.create("https://fencing.dev/problems/out-of-range-token");

    /** The problem {@code type} of a 409 for a token sent to a method that acquires its own lock. */
    public static final URI REMOTE_TOKEN_SET_ASIDE_TYPE =
            URI.create("https://fencing.dev/problems/remote-token-set-aside");

    /** The problem {@code type} of a 428 for a missing token. */
    public static final URI MISSING_TOKEN_TYPE = URI.create("https://fencing.dev/problems/missing-token");

    /** The problem {@code type} of a 403 for a token that failed signature verification. */
    public static final URI FORGED_TOKEN_TYPE = URI.create("https://fencing.dev/problems/forged-token");

    /** The problem type of a fenced write reached outside the transaction its store checks in (500). */
    public static final URI NO_TRANSACTION_TYPE = URI.create("https://fencing.dev/problems/no-transaction");

    /** The problem {@code type} of a 503 for a fence row held longer than the store's lock wait bound. */
    public static final URI FENCE_BUSY_TYPE = URI.create("https://fencing.dev/problems/fence-busy");

    /** The problem {@code type} of a 503 for a check the database aborted (serialization failure, deadlock). */
    public static final URI FENCE_CONFLICT_TYPE = URI.create("https://fencing.dev/problems/fence-conflict");

    /** The problem type of a 400 "Invalid fencing key": the {@code @Fenced} key could not be computed. */
    public static final URI INVALID_KEY_TYPE = URI.create("https://fencing.dev/problems/invalid-key");

    /** The problem type of a 503 "Fence store unavailable": the store could not decide. */
    public static final URI STORE_UNAVAILABLE_TYPE = URI.create("https://fencing.dev/problems/store-unavailable");

    /** The problem type of a 503 "Lock not acquired": not in time, or the lock service did not answer. */
    public static final URI LOCK_NOT_ACQUIRED_TYPE = URI.create("https://fencing.dev/problems/lock-not-acquired");

    /** The problem type of a 500 "Lock service broken": its setup fails every acquisition until repaired. */
    public static final URI LOCK_SERVICE_BROKEN_TYPE = URI.create("https://fencing.dev/problems/lock-service-broken");

    /** The problem {@code type} of a 400 for a {@code Fencing-Token} header that does not parse. */
    public static final String MALFORMED_TOKEN_TYPE = "https://fencing.dev/problems/malformed-token";

    /** The problem {@code type} of a 403 for a {@code Fencing-Token} header from a caller that is not trusted. */
    public static final String UNTRUSTED_TOKEN_TYPE = "https://fencing.dev/problems/untrusted-token";

    /** The title of the forged-token answer. */
    public static final String FORGED_TITLE = "Forged fencing token";

    /** Seconds a client should wait before retrying a request that failed for a reason that passes. */
    public static final long RETRY_AFTER_SECONDS = 1;

    /** The media type of every answer here. */
    public static final String PROBLEM_JSON = "application/problem+json";

    private FencingProblems() {
    }

    /**
     * The answer to any of the library's exceptions ({@code e} itself, not its causes), or {@code null} when
     * {@code e} is none of them. The same answers as the servlet advices, in the same precedence: forged before
     * the other rejections.
     *
     * @param headerIgnored when the request carried a {@code Fencing-Token} header that no filter read, why (added to
     *                      the detail of a 428); otherwise {@code null}
     */
    public static ResponseEntity<ProblemDetail> of(Throwable e, String headerIgnored) {
        return of(e, headerIgnored, false);
    }

    /**
     * As {@link #of(Throwable, String)}; {@code reactive}: the answer is for the WebFlux stack, whose 428 names the
     * reactive ways to bind a token ({@link #missingReactive}).
     */
    public static ResponseEntity<ProblemDetail> of(Throwable e, String headerIgnored, boolean reactive) {
        return of(e, headerIgnored, reactive, true);
    }

    /**
     * As {@link #of(Throwable, String, boolean)}; {@code callerMaySend} false (no token filter covered the request):
     * a busy or conflicting check's token was the service's own, and its answer leaves it out.
     */
    public static ResponseEntity<ProblemDetail> of(Throwable e, String headerIgnored, boolean reactive,
                                                   boolean callerMaySend) {
        if (e instanceof MissingTokenException missing && reactive) {
            return answer(missingReactive(missing, headerIgnored));
        }
        if (e instanceof ForgedTokenException forged) {
            return answer(forged(forged));
        }
        if (e instanceof TokenRejectedException rejected) {
            return answer(rejected(rejected));
        }
        if (e instanceof MissingTokenException missing) {
            return answer(missing(missing, headerIgnored));
        }
        if (e instanceof RemoteTokenSetAsideException setAside) {
            return answer(remoteTokenSetAside(setAside));
        }
        if (e instanceof InvalidKeyException invalidKey) {
            return answer(invalidKey(invalidKey));
        }
        if (e instanceof FenceStoreException store) {
            return storeRefused(store, callerMaySend);
        }
        if (e instanceof LockAcquisitionException lock) {
            return lock.retryable() ? retryLater(lockNotAcquired(lock)) : answer(lockServiceBroken(lock));
        }
        if (e instanceof TransientFenceFailure failure) {
            return retryLater(transientFailure(failure, e.getMessage(), callerMaySend));
        }
        return null;
    }

    /**
     * The answer to a store's refusal: a transient one (busy, conflict) is a 503 with {@code Retry-After}, a fenced
     * write outside a transaction a 500 ({@link #noTransaction}), any other a 503 ({@link #storeFailed}).
     */
    public static ResponseEntity<ProblemDetail> storeRefused(FenceStoreException e) {
        return storeRefused(e, true);
    }

    /**
     * {@link #storeRefused(FenceStoreException)}, for a caller that may send tokens or not ({@link #transientFailure}).
     */
    public static ResponseEntity<ProblemDetail> storeRefused(FenceStoreException e, boolean callerMaySend) {
        if (e instanceof TransientFenceFailure failure) {
            return retryLater(transientFailure(failure, e.getMessage(), callerMaySend));
        }
        if (e instanceof OutsideTransactionException noTransaction) {
            return answer(noTransaction(noTransaction));
        }
        return answer(storeFailed(e));
    }

    /**
     * 500: the application reached a fenced write outside the transaction its store checks in, a setup mistake that
     * a retry does not fix; the exception's message (which names the fix) is logged at ERROR, never sent.
     */
    public static ProblemDetail noTransaction(OutsideTransactionException e) {
        return serverFault("Fenced write outside a transaction for resource '" + e.resource() + "'; answering 500: "
                + e.getMessage(), "The fenced write for resource '" + e.resource() + "' was reached where its "
                + "fence store cannot check it atomically with the write (no transaction, where the store needs the "
                + "caller's; another transaction manager's; a read-only one; one whose connection is in "
                + "autocommit), so its "
                + "token was not checked; the call did not run. The server log says which and what to change",
                NO_TRANSACTION_TYPE, "Fenced write outside a transaction", e.resource());
    }

    /**
     * A 500 for a defect of the service: {@code logged} at ERROR (it may name methods, tables, the fix), only
     * {@code detail}, which names the resource, sent.
     */
    /** The lines of a token lost in the service: at most one a minute per method, each saying how many it held back. */
    private static final LogPace LOST_LINES = new LogPace(1_000, 60_000, "other");

    /** A 500 for a defect of the service; {@code logged} is logged at ERROR, unless {@code null} (held back). */
    private static ProblemDetail serverFault(String logged, String detail, URI type, String title, String resource) {
        if (logged != null) {
            log.error(logged);
        }
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.INTERNAL_SERVER_ERROR, detail);
        problem.setType(type);
        problem.setTitle(title);
        problem.setProperty("resource", resource);
        return problem;
    }

    private static ResponseEntity<ProblemDetail> answer(ProblemDetail problem) {
        return ResponseEntity.status(problem.getStatus()).body(problem);
    }

    /** 409 for a stale, duplicate or out-of-range token; a forged one gets {@link #forged}. */
    public static ProblemDetail rejected(TokenRejectedException e) {
        if (e instanceof ForgedTokenException forged) {
            return forged(forged);
        }
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, e.getMessage());
        switch (e.verdict()) {
            case REJECT_DUPLICATE -> {
                problem.setType(DUPLICATE_TOKEN_TYPE);
                problem.setTitle("Duplicate fencing token");
            }
            case REJECT_OUT_OF_RANGE -> {
                problem.setType(OUT_OF_RANGE_TOKEN_TYPE);
                problem.setTitle("Out-of-range fencing token");
            }
            default -> {
                problem.setType(STALE_TOKEN_TYPE);
                problem.setTitle("Stale fencing token");
            }
        }
        problem.setProperty("resource", e.resource());
        problem.setProperty("presented", e.presented().unsigned().toText()); // never a usable signed token
        problem.setProperty("maxSeen", e.maxSeen());
        problem.setProperty("verdict", e.verdict().outcome());
        problem.setProperty("afterBody", e.afterBody());
        if (e instanceof StaleTokenException stale && stale.lockLost()) {
            problem.setProperty("lockLost", true); // refused by this process, which knows the lease ended
        }
        return problem;
    }

    /**
     * The answer to a missing token: 428 when the request's caller may send tokens ({@code callerMaySend}: a token
     * filter marked it), the caller's token was missing; otherwise 500 ({@link #lost}), the service's own, and
     * {@code headerIgnored} says why a header the caller sent was not read. {@code reactive}: the WebFlux 428.
     */
    public static ProblemDetail missing(MissingTokenException e, boolean callerMaySend, String headerIgnored,
                                        boolean reactive) {
        if (!callerMaySend) {
            return lost(e, headerIgnored, reactive);
        }
        return reactive ? missingReactive(e, null) : missing(e, null);
    }

    /**
     * The answer to a refused token: {@link #rejected(TokenRejectedException)}, and when the request's caller may not
     * send tokens ({@code callerMaySend} false) the token was the service's own lock's: {@link #ownTokenRejected}.
     */
    public static ProblemDetail rejected(TokenRejectedException e, boolean callerMaySend) {
        if (!callerMaySend && e instanceof ForgedTokenException forged) {
            return ownTokenForged(forged);
        }
        ProblemDetail problem = rejected(e);
        return callerMaySend ? problem : ownTokenRejected(problem, e);
    }

    /**
     * 500 for the service's own token refused as forged (no token filter covered the request, so its caller sent no
     * token): the service signs with keys a verifier it wrote to does not accept (a service it called, after a key
     * rotation done in the wrong order, say). A setup fault of the service, not the caller's: the cause is logged at
     * ERROR, and the answer names the resource only, never the holder id.
     */
    public static ProblemDetail ownTokenForged(ForgedTokenException e) {
        ProblemDetail problem = serverFault("The token this service presented for resource '" + e.resource()
                + "' was refused as forged (by a service it called, or its own verifier): its signing keys and the "
                + "verifier's differ, after a key rotation done in the wrong order, say; answering 500: "
                + e.getMessage(), "The write of resource '" + e.resource() + "' was refused: the token this "
                + "service presented, its own, did not pass signature verification. A setup fault of the service, "
                + "not the caller's; the server log says more", FORGED_TOKEN_TYPE, FORGED_TITLE, e.resource());
        problem.setProperty("verdict", "forged");
        return problem;
    }

    /**
     * {@code problem}, the answer to {@code e}, for a request whose caller could not have sent the refused token (no
     * token filter covered it): the token was the service's own lock's, so the detail says what happened without the
     * method or the holder id, and {@code presented} is left out. Status, type, title, resource, max_seen and verdict
     * stay.
     */
    public static ProblemDetail ownTokenRejected(ProblemDetail problem, TokenRejectedException e) {
        if (e instanceof StaleTokenException stale && stale.lockLost()) {
            problem.setDetail("The write of resource '" + e.resource() + "' was refused: the lock this service took "
                    + "for it (token " + e.presented().value() + ") is lost, its lease ended before the write (a "
                    + "pause, a lost session, a lease time run out), or was given back before the write (work handed "
                    + "to another thread that the acquiring call did not wait for), so another holder may have it; "
                    + "the fence store "
                    + "was not asked. The refused call did not run: nothing was written by it. Retry the request: "
                    + "it takes the lock again");
            if (problem.getProperties() != null) {
                problem.getProperties().remove("presented");
            }
            return problem;
        }
        problem.setDetail("The write of resource '" + e.resource() + "' was refused: the token this service presented ("
                + e.presented().value() + ", its own, not the caller's) was not accepted, max_seen is " + e.maxSeen()
                + " (verdict " + e.verdict().outcome() + "); " + (e.verdict() == Verdict.REJECT_OUT_OF_RANGE
                ? "the token is further above max_seen than the store's bound on one advance (maxAdvance): the "
                + "lock service's counter jumped (an issuer offset, a family floor after compaction) or the bound is "
                + "too small (docs/operations.md, \"A bound on one advance\"). "
                : "a newer holder has written, or the lock service's counter is behind max_seen (after a counter "
                + "reset or a restored backup). ") + (e.afterBody()
                ? "The refused call had run (the check came at commit): its writes in the transaction were rolled "
                + "back, what it did outside the transaction happened (what it did outside the database, too)"
                : "The refused call did not run: nothing was written by it"));
        if (problem.getProperties() != null) {
            problem.getProperties().remove("presented");
        }
        return problem;
    }

    /** 403 for a forged token: a generic detail naming the resource, never why verification failed. */
    public static ProblemDetail forged(ForgedTokenException e) {
        return forged(e.resource(), e.presented());
    }

    /** 403 for {@code presented}, which failed signature verification for {@code resource}. */
    public static ProblemDetail forged(String resource, FencingToken presented) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.FORBIDDEN, "The fencing token for "
                + "resource '" + resource + "' failed signature verification; the call did not run and max_seen is "
                + "unchanged");
        problem.setType(FORGED_TOKEN_TYPE);
        problem.setTitle(FORGED_TITLE);
        problem.setProperty("resource", resource);
        problem.setProperty("presented", presented.unsigned().toText());
        problem.setProperty("verdict", "forged");
        return problem;
    }

    /**
     * 428. {@code headerIgnored}, when not {@code null}: the request carried a {@code Fencing-Token} header that no
     * filter read, and why; the detail says so.
     */
    public static ProblemDetail missing(MissingTokenException e, String headerIgnored) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.PRECONDITION_REQUIRED, e.getMessage());
        problem.setType(MISSING_TOKEN_TYPE);
        problem.setTitle("Missing fencing token");
        problem.setProperty("resource", e.resource());
        if (headerIgnored != null) {
            problem.setDetail(problem.getDetail() + ". The request's Fencing-Token header was not read: "
                    + headerIgnored);
        }
        return problem;
    }

    /** The problem {@code type} of a 500 for a token lost inside the service. */
    public static final URI LOST_TOKEN_TYPE = URI.create("https://fencing.dev/problems/token-lost");

    /**
     * 500: a fenced write found no token on a request that passed no token filter, so the token was this service's own
     * to bind (its acquiring method, a propagation it lost), or a header the caller sent was never read (no filter
     * covers the path): a defect of the service, not a precondition of the caller. The exception's message (which
     * names the method and the fix) is logged at ERROR, never sent; the detail names the resource only, and says so
     * when {@code headerIgnored} (why the header was not read) is not {@code null}.
     */
    public static ProblemDetail lost(MissingTokenException e, String headerIgnored) {
        return lost(e, headerIgnored, false);
    }

    /** {@link #lost(MissingTokenException, String)}; on the reactive stack the log gives the reactive advice. */
    static ProblemDetail lost(MissingTokenException e, String headerIgnored, boolean reactive) {
        long skipped = LOST_LINES.due(String.valueOf(e.operation()), System.currentTimeMillis());
        return serverFault(skipped < 0 ? null : lostLog(e, headerIgnored, reactive) + (skipped > 0 ? " (" + skipped
                + " more such 500s of this method since the last line; at most one line a minute per method)"
                : ""), "The fenced write of resource '" + e.resource()
                + "' found no fencing token bound, and this request could not send one: the service has none for it "
                + "here (no method on the way acquires the lock, a thread hop without propagation, or a write outside "
                + "the method that acquires it)" + boundElsewhere(e) + ". The fenced write did not run; the service's "
                + "log says where"
                + (headerIgnored == null ? "" : ". The request's Fencing-Token header was not read: " + headerIgnored),
                LOST_TOKEN_TYPE, LOST_TITLE, e.resource());
    }

    private static final String LOST_TITLE = "Fencing token lost";

    /** Where the service did hold tokens on that thread: a lock taken under a key written another way shows here. */
    private static String boundElsewhere(MissingTokenException e) {
        if (e.boundResources().isEmpty()) {
            return "";
        }
        return "; it had tokens bound only for " + e.boundResources().stream()
                .map(r -> "'" + dev.fencing.token.FencingToken.printable(r) + "'")
                .collect(java.util.stream.Collectors.joining(", ")) + ", so a lock may have been taken under a key "
                + "written another way";
    }

    /**
     * Whether the token refused in {@code e} was the caller's, so that the answer may show it: the request's caller
     * may send tokens ({@code callerMaySend}) and, where a token filter bound the caller's tokens ({@code bound}, its
     * {@code BOUND_ATTRIBUTE}: the resources), sent one for the refused token's resource. A token of the service's
     * own lock for another resource, refused on such a request, is the service's: its answer leaves it out, as on a
     * request no filter covered, and the caller's client does not take it for a refusal of its own token.
     */
    public static boolean callersToken(boolean callerMaySend, Object bound, Throwable e) {
        if (!callerMaySend) {
            return false;
        }
        String resource = e instanceof TokenRejectedException rejected
                ? (rejected.presented() != null ? rejected.presented().resource() : rejected.resource())
                : e instanceof TransientFenceFailure failure ? failure.resource()
                : e instanceof FenceStoreException store ? store.resource()
                : null;
        return resource == null || !(bound instanceof java.util.Set<?> sent) || sent.contains(resource);
    }

    /**
     * 500: a fenced write found no token for a resource the caller did send one for (a token filter bound it on the
     * request thread), so the write ran on a thread the service did not propagate it to ({@code supplyAsync}, a
     * parallel stream, an executor not wrapped): a defect of the service, logged at ERROR with the exception's
     * message (which names the method), not the caller's missing precondition.
     */
    public static ProblemDetail lostAfterSent(MissingTokenException e) {
        return lostAfterSent(e, false);
    }

    /**
     * {@link #lostAfterSent(MissingTokenException)}, for a WebFlux request ({@code reactive}): the token was bound in
     * the request's Reactor Context, and the write ran where that context did not reach.
     */
    public static ProblemDetail lostAfterSent(MissingTokenException e, boolean reactive) {
        // the exception's own advice (send the token with the request) is wrong here: the caller did; its stack
        // trace shows the thread and the code that hopped
        log.error("Fenced write " + e.operation() + " found no token for resource '" + e.resource() + "', although "
                + "the request's Fencing-Token header carried one, " + (reactive ? "bound in the request's Reactor "
                + "Context: it ran where that context did not reach (a publisher subscribed outside the request's "
                + "chain, with subscribe() or block(); a blocking @Fenced method called on another thread without "
                + "context propagation, Hooks.enableAutomaticContextPropagation(); the stack trace shows which)"
                : "bound on the request thread: it ran on a thread the token was not propagated to "
                + "(CompletableFuture.supplyAsync, a parallel stream, an executor that is not wrapped with "
                + "FencingPropagation or a context-propagating TaskDecorator, a Kotlin coroutine resumed after "
                + "delay() or withContext() without Spring's PropagationContextElement in its context; the stack "
                + "trace shows which)")
                + "; answering 500", e);
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.INTERNAL_SERVER_ERROR, "The fenced write "
                + "of resource '" + e.resource() + "' found no fencing token bound, although the request carried one: "
                + "the service lost it " + (reactive ? "where the request's Reactor Context did not reach"
                : "on a thread hop without propagation") + ". That write did not run; other writes of "
                + "the request (before it, or beside it on other threads) may have; the service's log says where");
        problem.setType(LOST_TOKEN_TYPE);
        problem.setTitle(LOST_TITLE);
        problem.setProperty("resource", e.resource());
        return problem;
    }

    /** What {@link #lost} logs: the exception's message, with the advice of the stack the request ran on. */
    static String lostLog(MissingTokenException e, String headerIgnored, boolean reactive) {
        String message = e.getMessage();
        if (reactive) {
            message = (message.contains(SERVLET_ADVICE) ? message.replace(SERVLET_ADVICE, REACTIVE_ADVICE)
                    : message.contains(REACTIVE_BIND) ? message
                    : message + "; " + REACTIVE_ADVICE.substring(0, REACTIVE_ADVICE.length() - 1))
                    + ". A FencingContext.bind(...) scope around a call that returns a publisher has ended before "
                    + "the publisher is subscribed (a @Transactional reactive service subscribes later)";
        }
        return "Fenced write found no token for resource '" + e.resource() + "' on a request that passed no token "
                + "filter" + (headerIgnored == null ? "" : " (its Fencing-Token header was not read: "
                + headerIgnored + ")") + "; answering 500: " + message;
    }

    /** The servlet advice of {@link MissingTokenException}'s message, replaced on the reactive stack. */
    static final String SERVLET_ADVICE = "bind one with FencingContext.bind(...)";

    /** Named by a message that gives the reactive advice already (a reactive chain's refusal). */
    static final String REACTIVE_BIND = "contextWrite(ReactiveFencing.bind(token))";

    /** What the WebFlux stack's 428 says instead of {@link #SERVLET_ADVICE}. */
    static final String REACTIVE_ADVICE = "put one in the Reactor Context with "
            + "contextWrite(ReactiveFencing.bind(token)), or send it in the Fencing-Token header on a path a "
            + "FencingTokenWebFilter covers,";

    /**
     * 428 on the WebFlux stack: as {@link #missing}, its detail naming
     * {@code contextWrite(ReactiveFencing.bind(token))} and the {@code FencingTokenWebFilter} instead of
     * {@code FencingContext.bind(...)}, which binds nothing a reactive pipeline reads.
     */
    public static ProblemDetail missingReactive(MissingTokenException e, String headerIgnored) {
        ProblemDetail problem = missing(e, headerIgnored);
        String detail = problem.getDetail();
        problem.setDetail(detail.contains(SERVLET_ADVICE) ? detail.replace(SERVLET_ADVICE, REACTIVE_ADVICE)
                : detail.contains(REACTIVE_BIND) ? detail // a reactive chain's refusal: says it already
                : detail + "; on the reactive stack, " + REACTIVE_ADVICE.substring(0, REACTIVE_ADVICE.length() - 1));
        return problem;
    }

    /** 409: a token sent to a method that acquires its own lock. */
    public static ProblemDetail remoteTokenSetAside(RemoteTokenSetAsideException e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, e.getMessage());
        problem.setType(REMOTE_TOKEN_SET_ASIDE_TYPE);
        problem.setTitle("Fencing token sent to a method that acquires its own lock");
        problem.setProperty("resource", e.resource());
        problem.setProperty("presentedValue", e.presentedValue());
        return problem;
    }

    /** 400: the key could not be computed. */
    public static ProblemDetail invalidKey(InvalidKeyException e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, e.getMessage());
        problem.setType(INVALID_KEY_TYPE);
        problem.setTitle("Invalid fencing key");
        problem.setProperty("resource", e.resource());
        return problem;
    }

    /**
     * The 503 lines of an outage: at most one a minute per kind and cause (every request fails the same way while a
     * database or lock service is down), each saying how many it held back.
     */
    private static final LogPace OUTAGE_LINES = new LogPace(64, 60_000, "other");

    /** The lines held back since the last one of {@code kind} failing with {@code cause}, or -1: not now. */
    private static long outageLine(String kind, Throwable cause) {
        Throwable root = cause;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return OUTAGE_LINES.due(kind + ' ' + root.getClass().getName(), System.currentTimeMillis());
    }

    /** The count held back, said before the exception's message (which can run to many lines: SQL, a stack trace). */
    private static String heldBack(long skipped) {
        return skipped > 0 ? " (" + skipped + " more such 503s since the last line; at most one line a minute per "
                + "cause)" : "";
    }

    /** 503; the exception's message is logged at WARN (at most once a minute per cause), never sent. */
    public static ProblemDetail storeFailed(FenceStoreException e) {
        long skipped = outageLine("store", e);
        if (skipped >= 0) {
            log.warn("Fence store failed for resource '" + e.resource() + "'" + heldBack(skipped)
                    + "; answering 503: " + e.getMessage(), e);
        }
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE, "The fence store "
                + "could not check the token for resource '" + e.resource() + "'; the call did not run");
        problem.setType(STORE_UNAVAILABLE_TYPE);
        problem.setTitle("Fence store unavailable");
        problem.setProperty("resource", e.resource());
        return problem;
    }

    /**
     * 503 (send it with {@link #retryLater}); the exception's message is logged at WARN (at most once a minute per
     * cause), never sent.
     */
    public static ProblemDetail lockNotAcquired(LockAcquisitionException e) {
        long skipped = outageLine("lock", e);
        if (skipped >= 0) {
            log.warn("Lock not acquired for resource '" + e.resource() + "'" + heldBack(skipped)
                    + "; answering 503: " + e.getMessage());
        }
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE, "The lock on "
                + "resource '" + e.resource() + "' was not acquired; the call did not run, retry later");
        problem.setType(LOCK_NOT_ACQUIRED_TYPE);
        problem.setTitle("Lock not acquired");
        problem.setProperty("resource", e.resource());
        return problem;
    }

    /**
     * 500: a lock that no retry can take until the lock service's setup is repaired ({@link
     * LockAcquisitionException#retryable()} false, such as a lease table dropped at runtime); the exception's message,
     * which names the repair, is logged at ERROR, never sent.
     */
    public static ProblemDetail lockServiceBroken(LockAcquisitionException e) {
        return serverFault("Lock service broken for resource '" + e.resource() + "'; answering 500: " + e.getMessage(),
                "The lock on resource '" + e.resource() + "' could not be taken: the lock service's setup is broken "
                + "and every acquisition fails until it is repaired; the call did not run, and a retry does not help. "
                + "The server log says what to repair", LOCK_SERVICE_BROKEN_TYPE, "Lock service broken", e.resource());
    }

    /**
     * 503 "Fence busy" / "Fence conflict" (send it with {@link #retryLater}); {@code message}, the exception's, is
     * logged at INFO, never sent.
     */
    public static ProblemDetail transientFailure(TransientFenceFailure failure, String message) {
        return transientFailure(failure, message, true);
    }

    /**
     * {@link #transientFailure(TransientFenceFailure, String)}; when the request's caller may not send tokens
     * ({@code callerMaySend} false: no token filter covered it) the token was the service's own lock's, and
     * {@code presented} is left out, as a 409 leaves it out ({@link #ownTokenRejected}).
     */
    public static ProblemDetail transientFailure(TransientFenceFailure failure, String message,
                                                 boolean callerMaySend) {
        boolean busy = failure.reason() == TransientFenceFailure.Reason.BUSY;
        log.info("Fence " + (busy ? "busy" : "conflict") + " for resource '" + failure.resource()
                + "'; answering 503: " + message);
        boolean afterBody = failure.afterBody();
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE, (busy
                ? "The fence of resource '" + failure.resource() + "' is held by another transaction"
                : "The database aborted the check of resource '" + failure.resource() + "' (serialization "
                + "failure or deadlock)") + (afterBody
                ? "; its writes in the transaction rolled back, but the call had run (this came at commit): what it "
                + "did outside the transaction happened (what it did outside the database, too). Retry if that is "
                + "safe to repeat"
                : "; the call did not run, retry later"));
        problem.setType(busy ? FENCE_BUSY_TYPE : FENCE_CONFLICT_TYPE);
        problem.setTitle(busy ? "Fence busy" : "Fence conflict");
        problem.setProperty("resource", failure.resource());
        problem.setProperty("reason", failure.reason().name().toLowerCase(Locale.ROOT));
        problem.setProperty("afterBody", afterBody);
        if (failure.presented() != null && callerMaySend) {
            // without its signature: a token refused as busy was never used, and may be above max_seen
            problem.setProperty("presented", failure.presented().unsigned().toText());
        }
        return problem;
    }

    /** 503 with {@code Retry-After} and {@code problem} as body. */
    public static ResponseEntity<ProblemDetail> retryLater(ProblemDetail problem) {
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
                .header(HttpHeaders.RETRY_AFTER, Long.toString(RETRY_AFTER_SECONDS))
                .body(problem);
    }

    /** 400 "Malformed fencing token header" with the parse error as detail. */
    public static ProblemDetail malformedHeader(String detail) {
        return header(HttpStatus.BAD_REQUEST, MALFORMED_TOKEN_TYPE, "Malformed fencing token header", detail);
    }

    /** 403 "Untrusted fencing token"; {@code detail} is a constant text, nothing of the request is echoed. */
    public static ProblemDetail untrustedHeader(String detail) {
        return header(HttpStatus.FORBIDDEN, UNTRUSTED_TOKEN_TYPE, "Untrusted fencing token", detail);
    }

    private static ProblemDetail header(HttpStatus status, String type, String title, String detail) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
        problem.setType(URI.create(type));
        problem.setTitle(title);
        return problem;
    }

    /**
     * {@code problem} as JSON text in UTF-8: {@code type} and {@code title} when set (no type means
     * {@code about:blank}), {@code status}, {@code detail},
     * {@code instance} when set, then the properties in order (numbers and booleans as such, anything else as a
     * string). For answers written where no message converter runs (a filter).
     */
    public static byte[] json(ProblemDetail problem) {
        StringBuilder json = new StringBuilder("{");
        if (problem.getType() != null) {
            json.append("\"type\":\"").append(json(problem.getType().toString())).append("\",");
        }
        if (problem.getTitle() != null) {
            json.append("\"title\":\"").append(json(problem.getTitle())).append("\",");
        }
        json.append("\"status\":").append(problem.getStatus());
        if (problem.getDetail() != null) {
            json.append(",\"detail\":\"").append(json(problem.getDetail())).append('"');
        }
        if (problem.getInstance() != null) {
            json.append(",\"instance\":\"").append(json(problem.getInstance().toString())).append('"');
        }
        Map<String, Object> properties = problem.getProperties() == null ? Map.of()
                : new LinkedHashMap<>(problem.getProperties());
        properties.forEach((name, value) -> {
            json.append(",\"").append(json(name)).append("\":");
            if (value instanceof Number || value instanceof Boolean) {
                json.append(value);
            } else if (value == null) {
                json.append("null");
            } else {
                json.append('"').append(json(value.toString())).append('"');
            }
        });
        return json.append('}').toString().getBytes(StandardCharsets.UTF_8);
    }

    /** {@code text} as the inside of a JSON string: quotes, backslashes and control characters escaped. */
    private static String json(String text) {
        StringBuilder out = new StringBuilder(text.length() + 16);
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || c == 0x7f || c == '\u2028' || c == '\u2029') {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
