package dev.fencing.web;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenFormatException;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.util.Collections;
import java.util.List;

/**
 * Server side: binds the tokens of an incoming request's {@code Fencing-Token} header for the request's thread,
 * exactly (nothing the thread had bound stays visible), and unbinds them when the request is done, also when it
 * fails. A malformed header is answered with 400 and the request goes no further. Requests without the header run
 * with no token, so a fenced write they reach is refused as missing.
 *
 * <p>Accept this header only from trusted callers: a forged, very large token would advance max_seen and lock out
 * the real holder. Put the filter behind your service-to-service authentication.
 */
public class FencingTokenFilter implements Filter {

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if (!(request instanceof HttpServletRequest http) || !(response instanceof HttpServletResponse httpResponse)) {
            chain.doFilter(request, response);
            return;
        }
        List<FencingToken> tokens;
        try {
            tokens = FencingHeader.parse(Collections.list(http.getHeaders(FencingHeader.NAME)));
        } catch (TokenFormatException e) {
            httpResponse.sendError(HttpServletResponse.SC_BAD_REQUEST, e.getMessage());
            return;
        }
        try (FencingScope ignored = FencingContext.bindOnly(tokens)) {
            chain.doFilter(request, response);
        }
    }
}
