package dev.fencing.web.internal;

import dev.fencing.FencingException;
import dev.fencing.context.MissingTokenException;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;

import java.math.BigDecimal;
import java.net.URI;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Turns a remote fence's refusal back into the library's exception, for every HTTP client the library supports: a
 * 409 {@code application/problem+json} answer of type stale, duplicate or out-of-range becomes the
 * {@link TokenRejectedException}, a 428 of type missing a {@link MissingTokenException}, a 403 of type forged a
 * {@link ForgedTokenException}, each counted; any other answer is none. Internal to fencing-web (shared by
 * {@code FencingTokenClientInterceptor} and {@code FencingTokenExchangeFilterFunction}), not an API for applications.
 */
public final class RemoteRefusals {

    /**
     * The caller's counter of refused remote calls: tags {@code resource} (the base resource) and {@code outcome} =
     * stale | duplicate | out-of-range | missing | forged.
     */
    public static final String REMOTE_REJECTIONS = "fencing.remote.rejections";

    /** The longest problem body read; a longer body is passed on untouched. */
    public static final int MAX_PROBLEM_BYTES = 64 * 1024;

    private final RemoteRejectionCounters counters;

    /** Refusals counted in {@value #REMOTE_REJECTIONS} on {@code registry}; {@code null}: counted nowhere. */
    public RemoteRefusals(MeterRegistry registry) {
        this.counters = new RemoteRejectionCounters(registry);
    }

    /**
     * Whether an answer with {@code status} and {@code contentType} may be a refusal, so that its body is worth
     * reading; cheap, reads nothing.
     */
    public static boolean candidate(int status, MediaType contentType) {
        return (status == HttpStatus.CONFLICT.value() || status == HttpStatus.PRECONDITION_REQUIRED.value()
                || status == HttpStatus.FORBIDDEN.value())
                && contentType != null && MediaType.APPLICATION_PROBLEM_JSON.isCompatibleWith(contentType);
    }

    /** The charset of a problem body: the content type's, UTF-8 when it names none. */
    public static Charset charset(MediaType contentType) {
        return contentType != null && contentType.getCharset() != null ? contentType.getCharset()
                : StandardCharsets.UTF_8;
    }

    /**
     * The exception a {@link #candidate} answer stands for, counted; {@code null} when its body is not one of the
     * remote fence's refusals (then nothing is counted).
     *
     * @param call the remote call as the exception names it ({@link #describe})
     */
    public FencingException refusal(String call, int status, String body) {
        Map<String, Object> problem = ProblemJson.parse(body);
        if (problem == null || !(problem.get("type") instanceof String type)
                || !(problem.get("resource") instanceof String resource) || resource.isBlank()
                || resource.length() > FencingToken.MAX_PART_LENGTH) {
            return null;
        }
        if (status == HttpStatus.PRECONDITION_REQUIRED.value()) {
            if (!FencingProblems.MISSING_TOKEN_TYPE.toString().equals(type)) {
                return null;
            }
            counters.increment(resource, "missing");
            return new MissingTokenException(resource, call);
        }
        if (status == HttpStatus.FORBIDDEN.value()) {
            return forged(problem, type, resource, call);
        }
        Verdict verdict = FencingProblems.STALE_TOKEN_TYPE.toString().equals(type) ? Verdict.REJECT_STALE
                : FencingProblems.DUPLICATE_TOKEN_TYPE.toString().equals(type) ? Verdict.REJECT_DUPLICATE
                : FencingProblems.OUT_OF_RANGE_TOKEN_TYPE.toString().equals(type) ? Verdict.REJECT_OUT_OF_RANGE
                : null;
        if (verdict == null
                || !(problem.get("presented") instanceof String presentedText)
                || !(problem.get("maxSeen") instanceof BigDecimal maxSeenNumber)) {
            return null;
        }
        FencingToken presented;
        long maxSeen;
        try {
            presented = FencingToken.parse(presentedText);
            maxSeen = maxSeenNumber.longValueExact();
        } catch (RuntimeException e) {
            return null;
        }
        counters.increment(resource, verdict.outcome());
        return TokenRejectedException.of(resource, presented, maxSeen, verdict, call);
    }

    private FencingException forged(Map<String, Object> problem, String type, String resource, String call) {
        if (!FencingProblems.FORGED_TOKEN_TYPE.toString().equals(type)
                || !(problem.get("presented") instanceof String presentedText)) {
            return null;
        }
        FencingToken presented;
        try {
            presented = FencingToken.parse(presentedText);
        } catch (RuntimeException e) {
            return null;
        }
        counters.increment(resource, "forged");
        return new ForgedTokenException(resource, presented, "the remote fence refused it as forged (its signature "
                + "did not verify there)", call);
    }

    /** The remote call as an exception names it: method and URI without user info, query or fragment. */
    public static String describe(HttpMethod method, URI uri) {
        StringBuilder out = new StringBuilder().append(method.name()).append(' ');
        if (uri.getScheme() != null) {
            out.append(uri.getScheme()).append("://");
        }
        if (uri.getHost() != null) {
            out.append(uri.getHost());
            if (uri.getPort() != -1) {
                out.append(':').append(uri.getPort());
            }
        }
        if (uri.getRawPath() != null) {
            out.append(uri.getRawPath());
        }
        return out.append(" (remote)").toString();
    }
}
