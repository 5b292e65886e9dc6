package dev.fencing.web.reactive;

import dev.fencing.context.FencingContext;
import dev.fencing.guard.LeftScopes;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.core.Ordered;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.util.pattern.PathPattern;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.util.List;

/**
 * Closes the fencing scopes left open on a WebFlux event-loop thread ({@code FencingContext.bind} without closing its
 * scope, in a handler or an operator), when a request starts there and when an exchange ends there, logs them at
 * ERROR and counts them in {@value FencingMetrics#LEFT_SCOPES} ({@code carrier=http}, with
 * {@link #withMeterRegistry}). Left there, work the loop runs next (another request, or another request's
 * continuation) would take the token as its caller's: a reactive {@code @Fenced} call falls back to the tokens bound
 * where it was made, and a blocking one reads them. Only on non-blocking threads (Reactor Netty's event loops), where
 * nothing is bound between signals: a request run on a caller's thread (a test's {@code WebTestClient} bound to a
 * controller, inside a binding of its own) is left alone. Between the leak and the next of these two moments the
 * loop may run other work under the token; Reactor's automatic context propagation
 * ({@code spring.reactor.context-propagation=auto}) clears such bindings around every operator. Register it first
 * ({@link #getOrder()}); the Spring Boot starter does, in every WebFlux application.
 */
public final class LeftBindingsWebFilter implements WebFilter, Ordered {

    /** The place the log line names: the work that left the scopes is gone by the time they are found. */
    static final String PLACE = "Work on a WebFlux event-loop thread";

    private final LeftScopes leaks;

    /** A filter that logs what it closes, and counts nothing. */
    public LeftBindingsWebFilter() {
        this(FencingMetrics.noop());
    }

    private LeftBindingsWebFilter(FencingMetrics metrics) {
        this.leaks = new LeftScopes(metrics, "http", "request");
    }

    /**
     * This filter, also counting what it closes in {@value FencingMetrics#LEFT_SCOPES} ({@code carrier=http}) on
     * {@code registry}; {@code null}: counts nothing.
     */
    public LeftBindingsWebFilter withMeterRegistry(MeterRegistry registry) {
        return new LeftBindingsWebFilter(new FencingMetrics(registry));
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        closeLeft(PLACE, null);
        // and when the exchange ends on an event loop: what its own work left there, before the loop runs anything
        // else (another request's continuation would otherwise fall back to the left token)
        return chain.filter(exchange).doFinally(signal -> closeLeft(null, exchange));
    }

    /**
     * On a non-blocking thread with tokens visible: closes every scope there and reports them, as {@code place} or
     * (when {@code null}) as {@code exchange}'s request.
     */
    private void closeLeft(String place, ServerWebExchange exchange) {
        if (FencingContext.isEmpty() || !Schedulers.isInNonBlockingThread() || FencingContext.snapshot().isEmpty()) {
            return; // nothing bound, a caller's own thread, or only a scope that hides what is below it
        }
        List<FencingToken> left = FencingContext.closeAll();
        if (!left.isEmpty()) {
            leaks.report(place != null ? place : "Request " + exchange.getRequest().getMethod() + " "
                    + place(exchange), left);
        }
    }

    /**
     * The exchange's place, for log lines: its handler's path pattern (annotated or functional) once matched, else its
     * path. Here rather than in the token filter, which needs fencing-reactor: this filter runs without it.
     */
    static String place(ServerWebExchange exchange) {
        Object pattern = exchange.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
        if (pattern == null) {
            pattern = exchange.getAttribute(RouterFunctions.MATCHING_PATTERN_ATTRIBUTE); // a functional route's
        }
        return pattern instanceof PathPattern path ? path.getPatternString() : exchange.getRequest().getPath().value();
    }

    /** First, before any filter that could bind or read tokens. */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
