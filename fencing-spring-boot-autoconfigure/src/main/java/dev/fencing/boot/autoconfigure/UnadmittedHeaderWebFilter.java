package dev.fencing.boot.autoconfigure;

import dev.fencing.web.FencingHeader;
import dev.fencing.web.internal.FencingProblems;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * A WebFlux application without fencing-reactor, where no {@code FencingTokenWebFilter} can be made (it binds tokens
 * into the Reactor Context with fencing-reactor): refuses a request carrying the {@code Fencing-Token} header with
 * 403 (the untrusted-token problem) before it runs, as the token filter refusing every path does, and as Spring MVC's
 * {@code UnadmittedTokenInterceptor} does. Ignored, the header's token (perhaps a zombie's) would be set aside unseen
 * by a blocking {@code @Fenced(acquire = true)} method, which takes a lock of its own and writes the request.
 */
final class UnadmittedHeaderWebFilter implements WebFilter {

    private static final String DETAIL = "This application accepts the " + FencingHeader.NAME + " header on no path "
            + "(its token could not be checked): " + FencingWebFluxAutoConfiguration.PATH_PATTERNS + ", with "
            + "dev.fencing:fencing-reactor on the class path, names the paths whose callers may send it";

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (!exchange.getRequest().getHeaders().containsHeader(FencingHeader.NAME)) {
            return chain.filter(exchange);
        }
        ProblemDetail problem = FencingProblems.untrustedHeader(DETAIL);
        byte[] body = FencingProblems.json(problem);
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(HttpStatus.valueOf(problem.getStatus()));
        response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        response.getHeaders().setContentLength(body.length);
        return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(body)));
    }
}
