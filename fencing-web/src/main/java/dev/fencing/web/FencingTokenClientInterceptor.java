package dev.fencing.web;

import dev.fencing.FencingException;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingSnapshot;
import dev.fencing.context.MissingTokenException;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.rule.OutOfRangeTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import dev.fencing.web.internal.Destinations;
import dev.fencing.web.internal.RemoteRefusals;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
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
import java.net.URI;
import java.nio.charset.Charset;
import java.util.Collection;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * Client side, for {@code RestClient} and {@code RestTemplate}: sends the tokens bound on the calling thread in the
 * {@code Fencing-Token} header of the requests it is told to, replacing any value set by hand. Nothing is added when
 * no token is bound. A signed token is sent in its signed text form, as bound. Register it with
 * {@code RestClient.builder().requestInterceptor(...)}.
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
    public static final String REMOTE_REJECTIONS = RemoteRefusals.REMOTE_REJECTIONS;

    /** The longest problem body read; a longer body is passed on untouched. */
    static final int MAX_PROBLEM_BYTES = RemoteRefusals.MAX_PROBLEM_BYTES;

    private final Predicate<HttpRequest> sendTo;
    private final RemoteRefusals refusals;

    /** Sends the bound tokens with every request of the client it is registered on. */
    public FencingTokenClientInterceptor() {
        this(request -> true);
    }

    /**
     * Sends the bound tokens only with the requests {@code sendTo} accepts; the others go out without the header
     * (a {@code Fencing-Token} header set by hand on them is left as it is).
     */
    public FencingTokenClientInterceptor(Predicate<HttpRequest> sendTo) {
        this(sendTo, null);
    }

    private FencingTokenClientInterceptor(Predicate<HttpRequest> sendTo, MeterRegistry registry) {
        this.sendTo = Objects.requireNonNull(sendTo, "sendTo");
        this.refusals = new RemoteRefusals(registry);
    }

    /**
     * This interceptor, sending to the same requests, that also counts each refusal it maps in
     * {@value #REMOTE_REJECTIONS} on {@code registry} ({@code null}: counts nothing). Counters are registered on a
     * resource's first refusal and reused; a failing meter never breaks the call.
     */
    public FencingTokenClientInterceptor withMeterRegistry(MeterRegistry registry) {
        return new FencingTokenClientInterceptor(sendTo, registry);
    }

    /**
     * Sends the bound tokens only to the hosts named, compared ignoring case: an entry {@code host} matches that host
     * on any port, an entry {@code host:port} only that port (the scheme's default port when the URI has none).
     * No host named: the tokens are sent nowhere.
     *
     * @throws dev.fencing.FencingConfigurationException when an entry is not {@code host} or {@code host:port} (a
     *                                                   scheme, a path, a query, user-info, or blank): it could never
     *                                                   match, and no token would be sent
     */
    public static FencingTokenClientInterceptor forHosts(Collection<String> hosts) {
        Predicate<URI> allowed = Destinations.hosts(hosts);
        return new FencingTokenClientInterceptor(request -> allowed.test(request.getURI()));
    }

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
            throws IOException {
        if (!sendTo.test(request)) {
            return execution.execute(request, body);
        }
        FencingSnapshot snapshot = FencingContext.snapshot();
        Collection<FencingToken> tokens = snapshot.values();
        if (!tokens.isEmpty()) {
            request.getHeaders().set(FencingHeader.NAME, FencingHeader.format(tokens));
        }
        ClientHttpResponse response = execution.execute(request, body);
        snapshot.markSent(tokens); // answered: the service had the tokens (a request that failed to go out did not)
        return response == null ? null : mapRefusal(request, response);
    }

    /**
     * Throws the library's exception for a fencing refusal of the remote advice; otherwise returns the response, its
     * body replayed from a buffer when it had to be read.
     */
    private ClientHttpResponse mapRefusal(HttpRequest request, ClientHttpResponse response) throws IOException {
        HttpStatusCode status = response.getStatusCode();
        MediaType contentType = response.getHeaders().getContentType();
        if (!RemoteRefusals.candidate(status.value(), contentType)) {
            return response;
        }
        InputStream in = response.getBody();
        byte[] bytes = in.readNBytes(MAX_PROBLEM_BYTES + 1);
        if (bytes.length > MAX_PROBLEM_BYTES) {
            return new BufferedResponse(response, new SequenceInputStream(new ByteArrayInputStream(bytes), in));
        }
        Charset charset = RemoteRefusals.charset(contentType);
        FencingException refusal = refusals.refusal(describe(request), status.value(), new String(bytes, charset));
        if (refusal == null) {
            return new BufferedResponse(response, new ByteArrayInputStream(bytes));
        }
        refusal.initCause(HttpClientErrorException.create(status, response.getStatusText(),
                response.getHeaders(), bytes, charset));
        response.close();
        throw refusal;
    }

    /** The remote call as an exception names it: method and URI without user info, query or fragment. */
    static String describe(HttpRequest request) {
        return RemoteRefusals.describe(request.getMethod(), request.getURI());
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
