package dev.fencing.web;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.LogPace;
import dev.fencing.token.FencingToken;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;

import java.io.IOException;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Closes the fencing scopes a servlet request left open on its thread ({@code FencingContext.bind} without closing
 * its scope) and logs them at ERROR, so that the next request the container runs on that pooled thread does not
 * write under this request's tokens. Map it to every path, before the other filters (the starter does, with
 * {@link #ORDER}); scopes already open when the request reached it (a test that binds around a MockMvc call) are left
 * as they were. Each dispatch (the request, an asynchronous one, an error one) is checked on its own thread.
 */
public final class LeftBindingsFilter implements Filter {

    /** The filter's order: first, so that whatever the other filters bind is inside it. */
    public static final int ORDER = Integer.MIN_VALUE;

    private static final System.Logger LOG = System.getLogger(LeftBindingsFilter.class.getName());

    /** One line per place a minute; the places are path patterns or paths, bounded. */
    private static final LogPace PACE = new LogPace(1_000, 60_000, "other");

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        FencingContext.Mark mark = FencingContext.mark();
        try {
            chain.doFilter(request, response);
        } finally {
            List<FencingToken> left = FencingContext.closeSince(mark);
            if (!left.isEmpty()) {
                report(request, left);
            }
        }
    }

    /**
     * Closes a filter's own {@code scope} at the end of its request, and with it whatever the request left open above
     * it: reported as this filter reports it, not thrown (the request's answer is made; the thread is clean either
     * way).
     */
    static void close(FencingScope scope, ServletRequest request) {
        try {
            scope.close();
        } catch (IllegalStateException leaked) {
            report(request, leaked.getMessage());
        }
    }

    private static void report(ServletRequest request, List<FencingToken> left) {
        report(request, left.stream().map(FencingToken::toString).collect(Collectors.joining(", ")));
    }

    private static void report(ServletRequest request, String left) {
        String place = place(request);
        long heldBack = PACE.due(place, System.currentTimeMillis());
        if (heldBack < 0) {
            return;
        }
        LOG.log(System.Logger.Level.ERROR, () -> "Request " + place + " left fencing tokens bound on its thread ("
                + Thread.currentThread().getName() + "): " + left + ". They are unbound now; without that, the next "
                + "request on this pooled thread would write under them, as if it held their locks. Close what you "
                + "bind: try (FencingScope scope = FencingContext.bind(token)) { ... }, or FencingContext.run(token, "
                + "() -> ...)"
                + (heldBack > 0 ? " (" + heldBack + " more such requests here since the last line)" : ""));
    }

    /** The request's place: its method, and its handler's path pattern as the token filter names it. */
    private static String place(ServletRequest request) {
        return request instanceof HttpServletRequest http ? http.getMethod() + " " + FencingTokenFilter.place(http)
                : "(not HTTP)";
    }
}
