package dev.fencing.web;

import dev.fencing.context.FencingContext;
import dev.fencing.token.FencingToken;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

import java.io.IOException;
import java.util.Collection;

/**
 * Client side, for {@code RestClient} and {@code RestTemplate}: sends the tokens bound on the calling thread in the
 * {@code Fencing-Token} header of every request, replacing any value set by hand. Nothing is added when no token is
 * bound. Register it with {@code RestClient.builder().requestInterceptor(new FencingTokenClientInterceptor())}.
 */
public class FencingTokenClientInterceptor implements ClientHttpRequestInterceptor {

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
            throws IOException {
        Collection<FencingToken> tokens = FencingContext.snapshot().values();
        if (!tokens.isEmpty()) {
            request.getHeaders().set(FencingHeader.NAME, FencingHeader.format(tokens));
        }
        return execution.execute(request, body);
    }
}
