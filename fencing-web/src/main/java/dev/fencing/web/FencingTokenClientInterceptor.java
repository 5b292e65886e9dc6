package dev.fencing.web;

import dev.fencing.FencingException;
import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.rule.OutOfRangeTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.web.client.HttpClientErrorException;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.math.BigDecimal;
import java.net.URI;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Client side, for {@code RestClient} and {@code RestTemplate}: sends the tokens bound on the calling thread in the
 * {@code Fencing-Token} header of the requests it is told to, replacing any value set by hand. Nothing is added when
 * no token is bound. A signed token is sent in its signed text form, as bound. Register it with {@code RestClient.builder().requestInterceptor(...)}.
 *
 * <p>A token tells the receiver which lock its holder has: send it only to the services that check it.
 * {@link #forHosts(Collection)} sends it only to the hosts named; the no-argument constructor sends it with every
 * request of the client it is registered on (suitable for a client built for one service only).
 *
 * <p>On those same requests it turns the fencing refusals of a remote {@link FencingExceptionAdvice} into the
 * library's exceptions, thrown to the caller: a 409 whose {@code application/problem+json} body has the problem
 * {@code type} {@link FencingExceptionAdvice#STALE_TOKEN_TYPE} becomes a {@link StaleTokenException},
 * {@link FencingExceptionAdvice#DUPLICATE_TOKEN_TYPE} a {@link DuplicateTokenException},
 * {@link FencingExceptionAdvice#OUT_OF_RANGE_TOKEN_TYPE} an {@link OutOfRangeTokenException}, and a 428 of type
 * {@link FencingExceptionAdvice#MISSING_TOKEN_TYPE} a {@link MissingTokenException}, and a 403 of type
 * {@link FencingExceptionAdvice#FORGED_TOKEN_TYPE} a {@link ForgedTokenException}; each carries the remote
 * resource (and presented token and max_seen), names the remote call as its operation, and has the
 * {@link HttpClientErrorException} the client would otherwise have thrown as its cause. Every other response (another
 * status, another problem type, a body that is not such a problem) reaches the client untouched. With a registry
 * ({@link #withMeterRegistry}) each mapped refusal is counted in {@value #REMOTE_REJECTIONS}.
 */
public class FencingTokenClientInterceptor implements ClientHttpRequestInterceptor {

    /**
     * The caller's counter of refused remote calls: tags {@code resource} (the base resource, as the remote
     * {@code fencing.checks} counts it, never the entity key) and {@code outcome} = stale | duplicate | out-of-range |
     * missing | forged.
     */
    public static final String REMOTE_REJECTIONS = "fencing.remote.rejections";

    /** The longest problem body read; a longer body is passed on untouched. */
    static final int MAX_PROBLEM_BYTES = 64 * 1024;

    private final Predicate<HttpRequest> sendTo;
    private final RemoteRejectionCounters counters;

    /** Sends the bound tokens with every request of the client it is registered on. */
    public FencingTokenClientInterceptor() {
        this(request -> true);
    }

    /**
     * Sends the bound tokens only with the requests {@code sendTo} accepts; the others go out without the header
     * (a {@code Fencing-Token} header set by hand on them is left as it is).
     */
    public FencingTokenClientInterceptor(Predicate<HttpRequest> sendTo) {
        this(sendTo, new RemoteRejectionCounters(null));
    }

    private FencingTokenClientInterceptor(Predicate<HttpRequest> sendTo, RemoteRejectionCounters counters) {
        this.sendTo = Objects.requireNonNull(sendTo, "sendTo");
        this.counters = counters;
    }

    /**
     * This interceptor, sending to the same requests, that also counts each refusal it maps in
     * {@value #REMOTE_REJECTIONS} on {@code registry} ({@code null}: counts nothing). Counters are registered on a
     * resource's first refusal and reused; a failing meter never breaks the call.
     */
    public FencingTokenClientInterceptor withMeterRegistry(MeterRegistry registry) {
        return new FencingTokenClientInterceptor(sendTo, new RemoteRejectionCounters(registry));
    }

    /**
     * Sends the bound tokens only to the hosts named, compared ignoring case: an entry {@code host} matches that host
     * on any port, an entry {@code host:port} only that port (the scheme's default port when the URI has none).
     * No host named: the tokens are sent nowhere.
     */
    public static FencingTokenClientInterceptor forHosts(Collection<String> hosts) {
        Set<String> allowed = hosts.stream().map(String::trim).filter(host -> !host.isEmpty())
                .map(host -> host.toLowerCase(Locale.ROOT)).collect(Collectors.toUnmodifiableSet());
        return new FencingTokenClientInterceptor(request -> matches(allowed, request.getURI()));
    }

    private static boolean matches(Set<String> allowed, URI uri) {
        String host = uri.getHost();
        if (host == null) {
            return false;
        }
        host = host.toLowerCase(Locale.ROOT);
        if (allowed.contains(host)) {
            return true;
        }
        int port = uri.getPort();
        if (port == -1) {
            port = "https".equalsIgnoreCase(uri.getScheme()) ? 443 : "http".equalsIgnoreCase(uri.getScheme()) ? 80 : -1;
        }
        return port != -1 && allowed.contains(host + ":" + port);
    }

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
            throws IOException {
        if (!sendTo.test(request)) {
            return execution.execute(request, body);
        }
        Collection<FencingToken> tokens = FencingContext.snapshot().values();
        if (!tokens.isEmpty()) {
            request.getHeaders().set(FencingHeader.NAME, FencingHeader.format(tokens));
        }
        ClientHttpResponse response = execution.execute(request, body);
        return response == null ? null : mapRefusal(request, response);
    }

    /**
     * Throws the library's exception for a fencing refusal of the remote advice; otherwise returns the response, its
     * body replayed from a buffer when it had to be read.
     */
    private ClientHttpResponse mapRefusal(HttpRequest request, ClientHttpResponse response) throws IOException {
        HttpStatusCode status = response.getStatusCode();
        if (status.value() != HttpStatus.CONFLICT.value() && status.value() != HttpStatus.PRECONDITION_REQUIRED.value()
                && status.value() != HttpStatus.FORBIDDEN.value()) {
            return response;
        }
        MediaType contentType = response.getHeaders().getContentType();
        if (contentType == null || !MediaType.APPLICATION_PROBLEM_JSON.isCompatibleWith(contentType)) {
            return response;
        }
        InputStream in = response.getBody();
        byte[] bytes = in.readNBytes(MAX_PROBLEM_BYTES + 1);
        if (bytes.length > MAX_PROBLEM_BYTES) {
            return new BufferedResponse(response, new SequenceInputStream(new ByteArrayInputStream(bytes), in));
        }
        Charset charset = contentType.getCharset() != null ? contentType.getCharset() : StandardCharsets.UTF_8;
        FencingException refusal = refusal(request, status, ProblemJson.parse(new String(bytes, charset)));
        if (refusal == null) {
            return new BufferedResponse(response, new ByteArrayInputStream(bytes));
        }
        refusal.initCause(HttpClientErrorException.create(status, response.getStatusText(),
                response.getHeaders(), bytes, charset));
        response.close();
        throw refusal;
    }

    /** The exception a problem of the remote advice stands for, counted; {@code null} for any other answer. */
    private FencingException refusal(HttpRequest request, HttpStatusCode status, Map<String, Object> problem) {
        if (problem == null || !(problem.get("type") instanceof String type)
                || !(problem.get("resource") instanceof String resource) || resource.isBlank()
                || resource.length() > FencingToken.MAX_PART_LENGTH) {
            return null;
        }
        String call = describe(request);
        if (status.value() == HttpStatus.PRECONDITION_REQUIRED.value()) {
            if (!FencingExceptionAdvice.MISSING_TOKEN_TYPE.toString().equals(type)) {
                return null;
            }
            counters.increment(resource, "missing");
            return new MissingTokenException(resource, call);
        }
        if (status.value() == HttpStatus.FORBIDDEN.value()) {
            return forged(problem, type, resource, call);
        }
        Verdict verdict = FencingExceptionAdvice.STALE_TOKEN_TYPE.toString().equals(type) ? Verdict.REJECT_STALE
                : FencingExceptionAdvice.DUPLICATE_TOKEN_TYPE.toString().equals(type) ? Verdict.REJECT_DUPLICATE
                : FencingExceptionAdvice.OUT_OF_RANGE_TOKEN_TYPE.toString().equals(type) ? Verdict.REJECT_OUT_OF_RANGE
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

    /** A 403 of type {@link FencingExceptionAdvice#FORGED_TOKEN_TYPE} as a {@link ForgedTokenException}, counted. */
    private FencingException forged(Map<String, Object> problem, String type, String resource, String call) {
        if (!FencingExceptionAdvice.FORGED_TOKEN_TYPE.toString().equals(type)
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
    static String describe(HttpRequest request) {
        URI uri = request.getURI();
        StringBuilder out = new StringBuilder().append(request.getMethod().name()).append(' ');
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

    /** A response whose body is read from {@code body} (what was buffered, then what was left). */
    private static final class BufferedResponse implements ClientHttpResponse {
        private final ClientHttpResponse delegate;
        private final InputStream body;

        BufferedResponse(ClientHttpResponse delegate, InputStream body) {
            this.delegate = delegate;
            this.body = body;
        }

        @Override
        public HttpStatusCode getStatusCode() throws IOException {
            return delegate.getStatusCode();
        }

        @Override
        public String getStatusText() throws IOException {
            return delegate.getStatusText();
        }

        @Override
        public HttpHeaders getHeaders() {
            return delegate.getHeaders();
        }

        @Override
        public InputStream getBody() {
            return body;
        }

        @Override
        public void close() {
            delegate.close();
        }
    }
}
