package dev.fencing.web.reactive;

import dev.fencing.context.TokenUse;
import dev.fencing.guard.RejectionListener;
import dev.fencing.guard.UncheckedReceipts;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import dev.fencing.web.FencingTokenFilter;
import dev.fencing.web.internal.FencingProblems;
import dev.fencing.web.internal.ForgedTokenCounters;
import dev.fencing.mode.FenceModes;
import dev.fencing.web.internal.HeaderAdmission;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;
import reactor.core.publisher.Mono;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Server side for WebFlux: binds the tokens of an incoming request's {@code Fencing-Token} header in the Reactor
 * Context of the rest of the chain, as remote ({@link ReactiveFencing#bindRemote}): reactive fenced checks see them,
 * but an acquiring method never runs under them. Exactly those tokens: a request without the header runs with an
 * empty token set, whatever the context held. With Reactor's automatic context propagation on, blocking code inside
 * the chain's operators sees them on its thread too ({@code FencingContext}), the context key being the one
 * context-propagation uses. The parsing, the answers and the counters are those of the servlet
 * {@link FencingTokenFilter}: a malformed header gets 400 (problem type
 * {@link FencingTokenFilter#MALFORMED_TOKEN_TYPE}) and the request goes no further.
 *
 * <p>Accept this header only from trusted callers, so the filter is built in one of two ways:
 * {@link #FencingTokenWebFilter(Predicate)} (the predicate says which exchanges may carry tokens, for example those
 * your service-to-service authentication accepted) or {@link #forPaths(String...)} (every request to those internal
 * path patterns is trusted; patterns that together cover every path are refused when the filter is built). A request
 * that is not trusted and carries the header gets 403 (problem type {@link FencingTokenFilter#UNTRUSTED_TOKEN_TYPE})
 * before it runs. With {@link #verifying(TokenVerifier)} a forged token gets 403 (the forged-token problem) too.
 */
public final class FencingTokenWebFilter implements WebFilter {

    /**
     * The exchange attribute this filter sets on every request whose caller may send tokens (its trust predicate or
     * path patterns accept it): {@link FencingWebExceptionHandler} answers a missing token there with 428 (the
     * caller's), and on any other request with 500 (the service's own, lost). Code that binds callers' tokens from a
     * carrier of its own sets it too.
     */
    public static final String APPLIED_ATTRIBUTE = FencingTokenWebFilter.class.getName() + ".APPLIED";

    private final Predicate<ServerWebExchange> trusted;
    private final String untrustedDetail;
    private final TokenVerifier verifier;
    private final ForgedTokenCounters forgedCounters;
    private final RejectionListener rejections;
    private final FenceModes modes;
    private final HeaderAdmission admission;
    private final UncheckedReceipts receipts;

    /**
     * A filter that accepts the header only on exchanges {@code trusted} accepts; it may see every request. The
     * predicate runs on the request's thread (it must not block), only for requests that carry the header.
     */
    public FencingTokenWebFilter(Predicate<ServerWebExchange> trusted) {
        this(Objects.requireNonNull(trusted, "trusted"), "This caller may not send the " + FencingHeader.NAME
                + " header", null, ForgedTokenCounters.NONE, RejectionListener.NONE, null, RECEIPTS_LOGGED);
    }

    private FencingTokenWebFilter(Predicate<ServerWebExchange> trusted, String untrustedDetail,
                                  TokenVerifier verifier, ForgedTokenCounters forgedCounters,
                                  RejectionListener rejections, FenceModes modes, UncheckedReceipts receipts) {
        this.receipts = receipts;
        this.trusted = trusted;
        this.untrustedDetail = untrustedDetail;
        this.verifier = verifier;
        this.forgedCounters = forgedCounters;
        this.rejections = rejections;
        this.modes = modes;
        this.admission = new HeaderAdmission(verifier, forgedCounters, rejections, modes);
    }

    /**
     * A filter that trusts the requests whose path within the application matches one of {@code patterns} (Spring's
     * {@link PathPattern} syntax, such as {@code "/internal/**"}); a request elsewhere that carries the header gets
     * 403.
     *
     * @throws IllegalArgumentException when no pattern is given, one does not parse, or one matches paths under any
     *                                  first segment ({@code /**}, {@code /{*path}}, a wildcard or capture first):
     *                                  such a filter would accept tokens from any caller
     */
    public static FencingTokenWebFilter forPaths(String... patterns) {
        Objects.requireNonNull(patterns, "patterns");
        if (patterns.length == 0) {
            throw new IllegalArgumentException("FencingTokenWebFilter.forPaths(): no path pattern given; name the "
                    + "internal paths that may carry " + FencingHeader.NAME + " headers (\"/internal/**\"), or "
                    + "construct it with a trust predicate");
        }
        List<PathPattern> parsed = new ArrayList<>();
        for (String pattern : patterns) {
            try {
                parsed.add(PathPatternParser.defaultInstance.parse(Objects.requireNonNull(pattern, "pattern")));
            } catch (PatternParseException e) {
                throw new IllegalArgumentException("FencingTokenWebFilter.forPaths(): path pattern '" + pattern
                        + "' does not parse: " + e.getMessage(), e);
            }
        }
        if (parsed.stream().anyMatch(pattern -> !literalFirstSegment(pattern.getPatternString()))) {
            throw new IllegalArgumentException("FencingTokenWebFilter.forPaths(" + String.join(", ", patterns)
                    + "): a pattern matches paths under any first segment, every controller's, so the filter "
                    + "would accept " + FencingHeader.NAME
                    + " headers from any caller, and a forged token opens the fence. Name internal paths only "
                    + "(\"/internal/**\"), or construct it with a trust predicate: new FencingTokenWebFilter("
                    + "exchange -> ...your service-to-service authentication...)");
        }
        List<PathPattern> internal = List.copyOf(parsed);
        return new FencingTokenWebFilter(exchange -> {
            PathContainer path = exchange.getRequest().getPath().pathWithinApplication();
            return internal.stream().anyMatch(pattern -> pattern.matches(path));
        }, "This path does not accept the " + FencingHeader.NAME + " header", null, ForgedTokenCounters.NONE,
                RejectionListener.NONE, null, RECEIPTS_LOGGED);
    }

    /**
     * Whether a pattern's first path segment is literal text: not a wildcard ({@code *}, {@code **}, {@code ?}) nor
     * a capture ({@code {first}}, {@code {first:[a-z]+}}, {@code {*rest}}), any of which reaches every controller's
     * path. The root alone ({@code /}) is literal.
     */
    private static boolean literalFirstSegment(String pattern) {
        String path = pattern.startsWith("/") ? pattern.substring(1) : pattern;
        int slash = path.indexOf('/');
        String first = slash < 0 ? path : path.substring(0, slash);
        return first.indexOf('*') < 0 && first.indexOf('?') < 0 && first.indexOf('{') < 0;
    }

    /**
     * This filter, trusting the same requests, that also verifies the signature of every token in the header with
     * {@code verifier} before anything is bound: a request carrying an unsigned or badly signed token is answered
     * with 403 (the forged-token problem, a generic detail naming the resource) and does not run.
     */
    public FencingTokenWebFilter verifying(TokenVerifier verifier) {
        return new FencingTokenWebFilter(trusted, untrustedDetail, Objects.requireNonNull(verifier, "verifier"),
                forgedCounters, rejections, modes, receipts);
    }

    /**
     * This filter counting each token it refuses as forged in {@code fencing.checks} ({@code outcome=forged}, the
     * token's base resource as {@code resource}), and each token of a writing request that no check presented in
     * {@value FencingMetrics#UNCHECKED_RECEIPTS} ({@code carrier=http}), on {@code registry}; {@code null}: counts
     * nothing (the latter are logged either way).
     */
    public FencingTokenWebFilter withMeterRegistry(MeterRegistry registry) {
        return new FencingTokenWebFilter(trusted, untrustedDetail, verifier, new ForgedTokenCounters(registry),
                rejections, modes, new UncheckedReceipts(new FencingMetrics(registry), CARRIER));
    }

    /**
     * This filter telling {@code listener} of each token it refuses as forged (a {@link ForgedTokenException} whose
     * operation is the request's method and path); {@code null}: tells nobody. Anything the listener throws is
     * ignored.
     */
    public FencingTokenWebFilter withRejectionListener(RejectionListener listener) {
        return new FencingTokenWebFilter(trusted, untrustedDetail, verifier, forgedCounters,
                listener == null ? RejectionListener.NONE : listener, modes, receipts);
    }

    /**
     * This filter admitting a forged token (instead of answering 403) when {@code modes} observes its base resource:
     * the fence's check then counts it ({@code forged}, {@code enforced=false}) and lets the call run, as observe
     * mode promises. Read on every request, so a switch reaches the filter too; {@code null}: refuse every forged one.
     */
    public FencingTokenWebFilter withModes(FenceModes modes) {
        return new FencingTokenWebFilter(trusted, untrustedDetail, verifier, forgedCounters, rejections, modes,
                receipts);
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (trusted.test(exchange)) {
            exchange.getAttributes().put(APPLIED_ATTRIBUTE, Boolean.TRUE); // callers may send tokens here
        }
        ServerHttpRequest request = exchange.getRequest();
        List<String> fields = request.getHeaders().getOrEmpty(FencingHeader.NAME);
        String untrusted = !fields.isEmpty() && !trusted.test(exchange) ? untrustedDetail : null;
        HeaderAdmission.Result admitted = admission.admit(fields, untrusted,
                () -> request.getMethod().name() + " " + request.getPath().value());
        if (!admitted.admitted()) {
            return problem(exchange.getResponse(), admitted.refusal());
        }
        if (!admitted.tokens().isEmpty()) {
            exchange.getAttributes().put(BOUND_ATTRIBUTE, admitted.resources());
        }
        List<FencingToken> tokens = admitted.tokens();
        if (tokens.isEmpty()) {
            return chain.filter(exchange).contextWrite(ReactiveFencing.bindRemote(tokens));
        }
        List<TokenUse> uses = UncheckedReceipts.usesFor(tokens);
        return chain.filter(exchange).contextWrite(ReactiveFencing.bindRemote(tokens, uses))
                .doOnSuccess(done -> reportUnchecked(exchange, tokens, uses));
    }

    /** The methods that write: a read that carries tokens (a client sends them to every path) is not reported. */
    private static final Set<HttpMethod> WRITES = Set.of(HttpMethod.POST, HttpMethod.PUT, HttpMethod.PATCH,
            HttpMethod.DELETE);

    /** The {@code carrier} tag of this filter's counters. */
    static final String CARRIER = "http";

    /** Unchecked receipts logged, counted nowhere: a filter without a registry. */
    private static final UncheckedReceipts RECEIPTS_LOGGED = new UncheckedReceipts(FencingMetrics.noop(), CARRIER);

    /** Reports the tokens of a writing request answered 2xx that no check presented. */
    private void reportUnchecked(ServerWebExchange exchange, List<FencingToken> tokens, List<TokenUse> uses) {
        ServerHttpRequest request = exchange.getRequest();
        HttpStatusCode status = exchange.getResponse().getStatusCode();
        if (!WRITES.contains(request.getMethod()) || (status != null && !status.is2xxSuccessful())) {
            return;
        }
        receipts.report(request.getMethod().name() + " " + LeftBindingsWebFilter.place(exchange), tokens, uses);
    }

    /**
     * The exchange attribute holding the resources ({@code Set<String>}) this filter bound the caller's tokens for:
     * {@link FencingWebExceptionHandler} answers a missing token for one of them with 500 "Fencing token lost" (the
     * caller sent it; the service's write ran where the request's Reactor Context did not reach), not 428.
     */
    public static final String BOUND_ATTRIBUTE = FencingTokenWebFilter.class.getName() + ".BOUND";

    /** Answers with the problem-detail body written here; the chain does not run. */
    private static Mono<Void> problem(ServerHttpResponse response, ProblemDetail problem) {
        byte[] body = FencingProblems.json(problem);
        response.setStatusCode(HttpStatus.valueOf(problem.getStatus()));
        response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        response.getHeaders().setContentLength(body.length);
        return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(body)));
    }
}
