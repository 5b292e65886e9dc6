package dev.fencing.web.reactive;

import dev.fencing.context.FencingContext;
import dev.fencing.guard.LeftScopes;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.util.List;

/**
 * Closes the fencing scopes earlier work left open on a WebFlux event-loop thread ({@code FencingContext.bind}
 * without closing its scope, in a handler or an operator), when a request starts there, logs them at ERROR and counts
 * them in {@value FencingMetrics#LEFT_SCOPES} ({@code carrier=http}, with {@link #withMeterRegistry}). Without that,
 * a reactive {@code @Fenced} call the request assembles on that thread would take the left token as its caller's
 * (the fence falls back to the tokens bound where the call was made), and write under it. Only on non-blocking
 * threads (Reactor Netty's event loops), where nothing is bound when a request starts: a request run on a caller's
 * thread (a test's {@code WebTestClient} bound to a controller, inside a binding of its own) is left alone. A leak
 * made on the event loop while a request is in progress there is found by the next request on that thread, not by
 * this one. Register it first ({@link #getOrder()}); the Spring Boot starter does, in every WebFlux application.
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
        if (!FencingContext.isEmpty() && Schedulers.isInNonBlockingThread()) {
            List<FencingToken> left = FencingContext.closeAll();
            if (!left.isEmpty()) {
                leaks.report(PLACE, left);
            }
        }
        return chain.filter(exchange);
    }

    /** First, before any filter that could bind or read tokens. */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
