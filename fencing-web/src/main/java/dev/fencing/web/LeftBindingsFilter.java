package dev.fencing.web;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.LeftScopes;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;

import java.io.IOException;
import java.util.List;

/**
 * Closes the fencing scopes a servlet request left open on its thread ({@code FencingContext.bind} without closing
 * its scope), logs them at ERROR and counts the request in {@value FencingMetrics#LEFT_SCOPES} ({@code carrier=http},
 * with {@link #withMeterRegistry}), so that the next request the container runs on that pooled thread does not write
 * under this request's tokens. Map it to every path, before the other filters (the starter does, with
 * {@link #ORDER}); scopes already open when the request reached it (a test that binds around a MockMvc call) are left
 * as they were. Each dispatch (the request, an asynchronous one, an error one) is checked on its own thread.
 */
public final class LeftBindingsFilter implements Filter {

    /** The filter's order: first, so that whatever the other filters bind is inside it. */
    public static final int ORDER = Integer.MIN_VALUE;

    /** The {@code carrier} tag of the leaks a servlet filter counts. */
    static final String CARRIER = "http";

    private final LeftScopes leaks;

    /** A filter that logs what requests leave open, and counts nothing. */
    public LeftBindingsFilter() {
        this(leaks(FencingMetrics.noop()));
    }

    private LeftBindingsFilter(LeftScopes leaks) {
        this.leaks = leaks;
    }

    /**
     * This filter, also counting each request that left scopes open in {@value FencingMetrics#LEFT_SCOPES}
     * ({@code carrier=http}) on {@code registry}; {@code null}: counts nothing.
     */
    public LeftBindingsFilter withMeterRegistry(MeterRegistry registry) {
        return new LeftBindingsFilter(leaks(new FencingMetrics(registry)));
    }

    /** The leak report of a servlet filter: fencing-web's filters each have one. */
    static LeftScopes leaks(FencingMetrics metrics) {
        return new LeftScopes(metrics, CARRIER, "request");
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        FencingContext.Mark mark = FencingContext.mark();
        try {
            chain.doFilter(request, response);
        } finally {
            List<FencingToken> left = FencingContext.closeSince(mark);
            if (!left.isEmpty()) {
                leaks.report(place(request), left);
            }
        }
    }

    /**
     * Closes a filter's own {@code scope} at the end of its request, and with it whatever the request left open above
     * it: reported to {@code leaks}, not thrown (the request's answer is made; the thread is clean either way).
     */
    static void close(FencingScope scope, ServletRequest request, LeftScopes leaks) {
        leaks.close(scope, () -> place(request));
    }

    /** The request's place: its method, and its handler's path pattern as the token filter names it. */
    private static String place(ServletRequest request) {
        return request instanceof HttpServletRequest http ? "Request " + http.getMethod() + " "
                + FencingTokenFilter.place(http) : "A request (not HTTP)";
    }
}
