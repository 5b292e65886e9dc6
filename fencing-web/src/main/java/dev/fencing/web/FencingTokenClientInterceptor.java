package dev.fencing.web;

import dev.fencing.context.FencingContext;
import dev.fencing.token.FencingToken;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

import java.io.IOException;
import java.net.URI;
import java.util.Collection;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Client side, for {@code RestClient} and {@code RestTemplate}: sends the tokens bound on the calling thread in the
 * {@code Fencing-Token} header of the requests it is told to, replacing any value set by hand. Nothing is added when
 * no token is bound. Register it with {@code RestClient.builder().requestInterceptor(...)}.
 *
 * <p>A token tells the receiver which lock its holder has: send it only to the services that check it.
 * {@link #forHosts(Collection)} sends it only to the hosts named; the no-argument constructor sends it with every
 * request of the client it is registered on (suitable for a client built for one service only).
 */
public class FencingTokenClientInterceptor implements ClientHttpRequestInterceptor {

    private final Predicate<HttpRequest> sendTo;

    /** Sends the bound tokens with every request of the client it is registered on. */
    public FencingTokenClientInterceptor() {
        this(request -> true);
    }

    /**
     * Sends the bound tokens only with the requests {@code sendTo} accepts; the others go out without the header
     * (a {@code Fencing-Token} header set by hand on them is left as it is).
     */
    public FencingTokenClientInterceptor(Predicate<HttpRequest> sendTo) {
        this.sendTo = Objects.requireNonNull(sendTo, "sendTo");
    }

    /**
     * Sends the bound tokens only to the hosts named, compared ignoring case: an entry {@code host} matches that host
     * on any port, an entry {@code host:port} only that port (the scheme's default port when the URI has none).
     * No host named: the tokens are sent nowhere.
     */
    public static FencingTokenClientInterceptor forHosts(Collection<String> hosts) {
        Set<String> allowed = hosts.stream().map(String::trim).filter(host -> !host.isEmpty())
                .map(host -> host.toLowerCase(Locale.ROOT)).collect(Collectors.toUnmodifiableSet());
        return new FencingTokenClientInterceptor(request -> matches(allowed, request.getURI()));
    }

    private static boolean matches(Set<String> allowed, URI uri) {
        String host = uri.getHost();
        if (host == null) {
            return false;
        }
        host = host.toLowerCase(Locale.ROOT);
        if (allowed.contains(host)) {
            return true;
        }
        int port = uri.getPort();
        if (port == -1) {
            port = "https".equalsIgnoreCase(uri.getScheme()) ? 443 : "http".equalsIgnoreCase(uri.getScheme()) ? 80 : -1;
        }
        return port != -1 && allowed.contains(host + ":" + port);
    }

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
            throws IOException {
        if (sendTo.test(request)) {
            Collection<FencingToken> tokens = FencingContext.snapshot().values();
            if (!tokens.isEmpty()) {
                request.getHeaders().set(FencingHeader.NAME, FencingHeader.format(tokens));
            }
        }
        return execution.execute(request, body);
    }
}
