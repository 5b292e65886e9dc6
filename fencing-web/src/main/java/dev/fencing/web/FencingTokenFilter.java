package dev.fencing.web;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.TokenUse;
import dev.fencing.guard.LeftScopes;
import dev.fencing.guard.RejectionListener;
import dev.fencing.guard.UncheckedReceipts;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.token.FencingToken;
import dev.fencing.web.internal.FencingProblems;
import dev.fencing.web.internal.ForgedTokenCounters;
import dev.fencing.mode.FenceModes;
import dev.fencing.web.internal.HeaderAdmission;
import dev.fencing.web.internal.ServletUrlPatterns;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.FilterRegistration;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRegistration;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.http.ProblemDetail;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Server side: binds the tokens of an incoming request's {@code Fencing-Token} header for the request's thread,
 * exactly (nothing the thread had bound stays visible), and unbinds them when the request is done, also when it
 * fails. The tokens are bound as remote ({@link FencingContext#bindRemote}): fenced checks see them, but a
 * {@code @Fenced(acquire = true)} method never runs under them; it acquires its own lock. A malformed header is
 * answered with 400 and an {@code application/problem+json} body (title "Malformed fencing token header", the parse
 * error as detail, cut to {@value #MAX_DETAIL_LENGTH} characters) and the request goes no further. Requests
 * without the header run with no token, so a fenced write they reach is refused as missing.
 *
 * <p>Accept this header only from trusted callers: without signed tokens ({@link #verifying(TokenVerifier)}), a forged,
 * very large token would advance max_seen and lock out the real holder. So the filter must be scoped, in one of two
 * ways, or it refuses to start
 * ({@link #init(FilterConfig)} throws and the web application does not come up):
 * <ul>
 *   <li>{@link #FencingTokenFilter()}: every request the filter sees is trusted, so it must be mapped to explicit
 *       internal URL patterns (such as {@code /internal/*}); mapped to everything ({@code /*}, {@code /}, a servlet
 *       mapped to those, or no mapping at all) it refuses to start;</li>
 *   <li>{@link #FencingTokenFilter(Predicate)}: the predicate says which requests may carry tokens (for example those
 *       your service-to-service authentication accepted); it may then be mapped anywhere. A request the predicate
 *       does not trust that carries the header is refused with 403 and a problem-detail body before it runs.</li>
 * </ul>
 * With {@link #verifying(TokenVerifier)} it also verifies each token's signature and answers a forged one with 403
 * (problem type {@link FencingExceptionAdvice#FORGED_TOKEN_TYPE}) before the request runs.
 *
 * <p>A filter without predicate whose {@code init} was never called (a {@code DelegatingFilterProxy} built around the
 * instance, a hand-made chain) cannot know its mapping, so it trusts nobody: a request carrying the header gets 403.
 */
public class FencingTokenFilter implements Filter {

    /** URL patterns that cover every request of the web application. */
    private static final Set<String> EVERYTHING = Set.of("/*", "/");

    private final Predicate<HttpServletRequest> trusted;
    private final TokenVerifier verifier;
    private final ForgedTokenCounters forgedCounters;
    private final RejectionListener rejections;
    private final FenceModes modes;
    private final HeaderAdmission admission;
    private final UncheckedReceipts receipts;
    private final LeftScopes leaks;

    /** Set by {@link #init} once the mapping was checked; until then a filter without predicate trusts nobody. */
    private volatile boolean scopeChecked;

    /**
     * A filter that trusts every request it sees; map it to explicit internal URL patterns only (it refuses to start
     * when mapped to everything).
     */
    public FencingTokenFilter() {
        this(null, null, ForgedTokenCounters.NONE, RejectionListener.NONE, null, RECEIPTS_LOGGED,
                LeftBindingsFilter.leaks(FencingMetrics.noop()));
    }

    private FencingTokenFilter(Predicate<HttpServletRequest> trusted, TokenVerifier verifier,
                               ForgedTokenCounters forgedCounters, RejectionListener rejections, FenceModes modes,
                               UncheckedReceipts receipts, LeftScopes leaks) {
        this.receipts = receipts;
        this.leaks = leaks;
        this.trusted = trusted;
        this.verifier = verifier;
        this.forgedCounters = forgedCounters;
        this.rejections = rejections;
        this.modes = modes;
        this.admission = new HeaderAdmission(verifier, forgedCounters, rejections, modes);
    }

    /**
     * A filter that accepts the header only on requests {@code trusted} accepts; it may be mapped to every path.
     * An untrusted request that carries the header is answered with 403 and does not run; one without the header
     * runs with no token bound. The predicate runs on the request's thread before anything is bound.
     */
    public FencingTokenFilter(Predicate<HttpServletRequest> trusted) {
        this(Objects.requireNonNull(trusted, "trusted"), null, ForgedTokenCounters.NONE, RejectionListener.NONE,
                null, RECEIPTS_LOGGED, LeftBindingsFilter.leaks(FencingMetrics.noop()));
    }

    /**
     * A filter that accepts the header only on requests whose path one of {@code patterns} matches: servlet URL
     * patterns ({@code /internal/*}, an exact path, {@code *.ext}; never {@code /*} or {@code /}), matched against the
     * request's servlet path and path info as a container matches a filter mapping. Register it with the same
     * patterns. Unlike {@link #FencingTokenFilter()} it does not depend on reading its registration at
     * {@link #init(FilterConfig)}, so it also works where the registration carries no patterns (Spring's MockMvc,
     * which applies the patterns itself); a request outside the patterns that carries the header gets 403.
     *
     * @throws dev.fencing.FencingConfigurationException when {@code patterns} is empty or holds a pattern that covers
     *                                                   every request or is not a servlet URL pattern
     */
    public static FencingTokenFilter forUrlPatterns(List<String> patterns) {
        List<String> checked = ServletUrlPatterns.requireAll(patterns, "FencingTokenFilter.forUrlPatterns");
        return new FencingTokenFilter(request -> ServletUrlPatterns.matches(checked, request));
    }

    /**
     * This filter, trusting the same requests, that also verifies the signature of every token in the header with
     * {@code verifier} before anything is bound: a request carrying an unsigned or badly signed token is answered
     * with 403 (problem type {@link FencingExceptionAdvice#FORGED_TOKEN_TYPE}, a generic detail naming the resource)
     * and does not run, so no store sees the token. The tokens that pass are bound as they came, signature included;
     * the fence's own verification of them is then a cache hit. Call it before the filter is registered.
     */
    public FencingTokenFilter verifying(TokenVerifier verifier) {
        return new FencingTokenFilter(trusted, Objects.requireNonNull(verifier, "verifier"), forgedCounters,
                rejections, modes, receipts, leaks);
    }

    /**
     * This filter counting each token it refuses as forged in {@code fencing.checks} ({@code outcome=forged}, the
     * token's base resource as {@code resource}), and each token of a writing request that no check presented in
     * {@value FencingMetrics#UNCHECKED_RECEIPTS} ({@code carrier=http}; for an async handler, a {@code Callable} or
     * {@code DeferredResult}, when the async request completes), and each request that left fencing scopes
     * open above the filter's in {@value FencingMetrics#LEFT_SCOPES}, on {@code registry}; {@code null}: counts
     * nothing (the latter two are logged either way).
     */
    public FencingTokenFilter withMeterRegistry(MeterRegistry registry) {
        FencingMetrics metrics = new FencingMetrics(registry);
        return new FencingTokenFilter(trusted, verifier, new ForgedTokenCounters(registry), rejections, modes,
                new UncheckedReceipts(metrics, CARRIER), LeftBindingsFilter.leaks(metrics));
    }

    /**
     * This filter telling {@code listener} of each token it refuses as forged (a {@link ForgedTokenException} whose
     * operation is the request's method and path), as the guard tells it of the rejections of its checks: the Spring
     * Boot actuator's recent rejections list them. {@code null}: tells nobody. Anything the listener throws is ignored.
     */
    public FencingTokenFilter withRejectionListener(RejectionListener listener) {
        return new FencingTokenFilter(trusted, verifier, forgedCounters,
                listener == null ? RejectionListener.NONE : listener, modes, receipts, leaks);
    }

    /**
     * This filter admitting a forged token (instead of answering 403) when {@code modes} observes its base resource:
     * the fence's check then counts it ({@code forged}, {@code enforced=false}) and lets the call run, as observe
     * mode promises. Read on every request, so a switch reaches the filter too; {@code null}: refuse every forged one.
     */
    public FencingTokenFilter withModes(FenceModes modes) {
        return new FencingTokenFilter(trusted, verifier, forgedCounters, rejections, modes, receipts, leaks);
    }

    /**
     * Refuses to start an unscoped filter: without a trust predicate, the registration must name URL patterns (or
     * servlets) that do not cover the whole application.
     *
     * @throws ServletException when the filter has no trust predicate and is mapped to everything, or its mapping
     *                          cannot be read
     */
    @Override
    public void init(FilterConfig config) throws ServletException {
        if (trusted != null) {
            return;
        }
        scopeChecked = false;
        String problem = unscopedMapping(config);
        if (problem != null) {
            throw new ServletException("FencingTokenFilter '" + config.getFilterName() + "' " + problem
                    + ": it would accept Fencing-Token headers from any caller, and a forged token opens the fence. "
                    + "Map it to internal paths only (FilterRegistrationBean.addUrlPatterns(\"/internal/*\")), or "
                    + "construct it with a trust predicate: new FencingTokenFilter(request -> ...your "
                    + "service-to-service authentication...)");
        }
        scopeChecked = true;
    }

    private static String unscopedMapping(FilterConfig config) {
        ServletContext servletContext = config.getServletContext();
        FilterRegistration registration = servletContext == null ? null
                : servletContext.getFilterRegistration(config.getFilterName());
        if (registration == null) {
            return "has no readable registration (its URL patterns cannot be checked)";
        }
        Collection<String> patterns = orEmpty(registration.getUrlPatternMappings());
        Collection<String> servlets = orEmpty(registration.getServletNameMappings());
        if (patterns.isEmpty() && servlets.isEmpty()) {
            return "has no explicit URL patterns";
        }
        for (String pattern : patterns) {
            if (EVERYTHING.contains(pattern.strip())) {
                return "is mapped to '" + pattern + "', every request";
            }
        }
        for (String servlet : servlets) {
            if ("*".equals(servlet)) {
                return "is mapped to every servlet";
            }
            ServletRegistration servletRegistration = servletContext.getServletRegistration(servlet);
            Collection<String> mappings = servletRegistration == null ? List.of()
                    : orEmpty(servletRegistration.getMappings());
            if (mappings.isEmpty()) {
                return "is mapped to servlet '" + servlet + "', whose URL patterns cannot be read";
            }
            for (String mapping : mappings) {
                if (EVERYTHING.contains(mapping.strip())) {
                    return "is mapped to servlet '" + servlet + "', which serves '" + mapping + "', every request";
                }
            }
        }
        return null;
    }

    private static Collection<String> orEmpty(Collection<String> values) {
        return values == null ? List.of() : new ArrayList<>(values);
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if (!(request instanceof HttpServletRequest http) || !(response instanceof HttpServletResponse httpResponse)) {
            chain.doFilter(request, response);
            return;
        }
        if (trusted == null ? scopeChecked : trusted.test(http)) {
            http.setAttribute(APPLIED_ATTRIBUTE, Boolean.TRUE); // callers may send tokens here
        }
        List<String> fields = Collections.list(http.getHeaders(FencingHeader.NAME));
        String untrusted = null;
        if (!fields.isEmpty() && trusted == null && !scopeChecked) {
            // init(FilterConfig) never ran (a DelegatingFilterProxy without targetFilterLifecycle, a hand-built
            // chain): the mapping is unknown, so no caller is trusted
            untrusted = "This FencingTokenFilter was not initialized, so its URL mapping was not checked "
                    + "and it accepts no " + FencingHeader.NAME + " header: let the container call init(FilterConfig) "
                    + "(DelegatingFilterProxy.setTargetFilterLifecycle(true)) or construct it with a trust predicate";
        } else if (!fields.isEmpty() && trusted != null && !trusted.test(http)) {
            untrusted = "This caller may not send the " + FencingHeader.NAME + " header";
        }
        HeaderAdmission.Result admitted = admission.admit(fields, untrusted,
                () -> http.getMethod() + " " + http.getRequestURI());
        if (!admitted.admitted()) {
            problem(httpResponse, admitted.refusal());
            return;
        }
        if (!admitted.tokens().isEmpty()) {
            http.setAttribute(BOUND_ATTRIBUTE, admitted.resources());
        }
        List<FencingToken> tokens = admitted.tokens();
        if (tokens.isEmpty()) {
            FencingScope scope = FencingContext.bindRemote(tokens);
            try {
                chain.doFilter(request, response);
            } finally {
                LeftBindingsFilter.close(scope, request, leaks);
            }
            return;
        }
        List<TokenUse> uses = UncheckedReceipts.usesFor(tokens);
        FencingScope scope = FencingContext.bindRemote(tokens, uses);
        try {
            chain.doFilter(request, response);
        } finally {
            LeftBindingsFilter.close(scope, request, leaks);
        }
        if (!WRITES.contains(http.getMethod()) || http.getDispatcherType() == DispatcherType.ASYNC) {
            return; // a read; or an async dispatch, whose request's own dispatch reports at its completion
        }
        if (http.isAsyncStarted()) {
            // an async handler (Callable, DeferredResult): its work, and its checks, run after this returned
            http.getAsyncContext().addListener(new ReportAtCompletion(http, httpResponse, tokens, uses));
        } else if (httpResponse.getStatus() / 100 == 2) {
            receipts.report(http.getMethod() + " " + place(http), tokens, uses);
        }
    }

    /**
     * Reports, when an async request completes with a 2xx answer, the received tokens no check presented: those the
     * handler's work presented on another thread (propagated there) or sent on count as checked.
     */
    private final class ReportAtCompletion implements AsyncListener {
        private final HttpServletRequest request;
        private final HttpServletResponse response;
        private final List<FencingToken> tokens;
        private final List<TokenUse> uses;

        ReportAtCompletion(HttpServletRequest request, HttpServletResponse response, List<FencingToken> tokens,
                           List<TokenUse> uses) {
            this.request = request;
            this.response = response;
            this.tokens = tokens;
            this.uses = uses;
        }

        @Override
        public void onComplete(AsyncEvent event) {
            if (response.getStatus() / 100 == 2) {
                receipts.report(request.getMethod() + " " + place(request), tokens, uses);
            }
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            event.getAsyncContext().addListener(this); // async started again: listeners are dropped unless re-added
        }

        @Override
        public void onTimeout(AsyncEvent event) {
        }

        @Override
        public void onError(AsyncEvent event) {
        }
    }

    /** The methods that write: a read that carries tokens (a client sends them to every path) is not reported. */
    private static final Set<String> WRITES = Set.of("POST", "PUT", "PATCH", "DELETE");

    /** The {@code carrier} tag of this filter's counters. */
    static final String CARRIER = "http";

    /** Unchecked receipts logged, counted nowhere: a filter without a registry. */
    private static final UncheckedReceipts RECEIPTS_LOGGED = new UncheckedReceipts(FencingMetrics.noop(), CARRIER);

    /** Spring MVC's request attribute holding the handler's path pattern, set once the request was dispatched. */
    private static final String BEST_MATCHING_PATTERN = "org.springframework.web.servlet.HandlerMapping"
            + ".bestMatchingPattern";

    /** The request's place for the report: its handler's path pattern when Spring MVC served it, else its path. */
    static String place(HttpServletRequest request) {
        Object pattern = request.getAttribute(BEST_MATCHING_PATTERN);
        return pattern != null ? pattern.toString() : request.getRequestURI();
    }

    /**
     * The request attribute holding the resources ({@code Set<String>}) this filter bound the caller's tokens for:
     * {@link FencingExceptionAdvice} answers a missing token for one of them with 500 "Fencing token lost" (the
     * caller sent it; the service lost it on a thread it did not propagate to), not 428.
     */
    public static final String BOUND_ATTRIBUTE = FencingTokenFilter.class.getName() + ".BOUND";

    /** Most characters of a parse error's message that a 400 answer repeats. */
    static final int MAX_DETAIL_LENGTH = HeaderAdmission.MAX_DETAIL_LENGTH;

    /**
     * The request attribute this filter sets on every request whose caller may send tokens (its mapping covers the
     * path, or its trust predicate accepts the request): {@link FencingExceptionAdvice} answers a missing token there
     * with 428 (the caller's), and on any other request with 500 (the service's own, lost). Code that binds callers'
     * tokens from a carrier of its own sets it too.
     */
    public static final String APPLIED_ATTRIBUTE = FencingTokenFilter.class.getName() + ".APPLIED";

    /** The problem {@code type} of a 400 for a {@code Fencing-Token} header that does not parse. */
    public static final String MALFORMED_TOKEN_TYPE = FencingProblems.MALFORMED_TOKEN_TYPE;

    /** The problem {@code type} of a 403 for a {@code Fencing-Token} header from a caller that is not trusted. */
    public static final String UNTRUSTED_TOKEN_TYPE = FencingProblems.UNTRUSTED_TOKEN_TYPE;

    /**
     * Answers with an RFC 9457 problem-detail body ({@code application/problem+json}) written here: the request
     * never reaches Spring MVC, and a container error page would not show the reason.
     */
    static void problem(HttpServletResponse response, ProblemDetail problem) throws IOException {
        byte[] body = FencingProblems.json(problem);
        response.resetBuffer();
        response.setStatus(problem.getStatus());
        response.setContentType(FencingProblems.PROBLEM_JSON);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
        response.flushBuffer();
    }
}
