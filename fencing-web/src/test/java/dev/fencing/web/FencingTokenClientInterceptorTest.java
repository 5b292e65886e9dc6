package dev.fencing.web;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.TokenUse;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpRequest;

import java.net.URI;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Which requests carry the bound tokens: every one by default, only the hosts named with {@code forHosts}. */
class FencingTokenClientInterceptorTest {

    private static final FencingToken TOKEN = new FencingToken("ledger", 7, "a");

    /** The Fencing-Token header the request went out with, {@code null} for none. */
    private static String sent(FencingTokenClientInterceptor interceptor, String uri) throws Exception {
        return sent(interceptor, uri, () -> FencingContext.bind(TOKEN));
    }

    private static String sent(FencingTokenClientInterceptor interceptor, String uri, Supplier<FencingScope> binding)
            throws Exception {
        HttpRequest request = request(uri);
        AtomicReference<String> header = new AtomicReference<>();
        try (var ignored = binding.get()) {
            interceptor.intercept(request, new byte[0], (req, body) -> {
                header.set(req.getHeaders().getFirst(FencingHeader.NAME));
                return null;
            });
        }
        return header.get();
    }

    private static HttpRequest request(String uri) {
        HttpHeaders headers = new HttpHeaders();
        return new HttpRequest() {
            @Override
            public HttpMethod getMethod() {
                return HttpMethod.POST;
            }

            @Override
            public URI getURI() {
                return URI.create(uri);
            }

            @Override
            public Map<String, Object> getAttributes() {
                return new HashMap<>();
            }

            @Override
            public HttpHeaders getHeaders() {
                return headers;
            }
        };
    }

    @Test
    void sendingAnAcquiredLocksTokenCountsAsPresentingIt() throws Exception {
        TokenUse sentTo = new TokenUse();
        assertThat(sent(new FencingTokenClientInterceptor(), "https://ledger.internal/x",
                () -> FencingContext.bindAcquired(TOKEN, sentTo))).isNotNull();
        assertThat(sentTo.isUsed()).isTrue();

        TokenUse unanswered = new TokenUse();
        try (var ignored = FencingContext.bindAcquired(TOKEN, unanswered)) {
            assertThatThrownBy(() -> new FencingTokenClientInterceptor().intercept(request("https://ledger.internal/x"),
                    new byte[0], (req, body) -> {
                        throw new java.net.ConnectException("Connection refused");
                    })).isInstanceOf(java.net.ConnectException.class);
        }
        assertThat(unanswered.isUsed()).as("a request that never reached the service").isFalse();

        TokenUse keptBack = new TokenUse();
        assertThat(sent(FencingTokenClientInterceptor.forHosts(List.of("ledger.internal")), "https://partner/x",
                () -> FencingContext.bindAcquired(TOKEN, keptBack))).isNull();
        assertThat(keptBack.isUsed()).isFalse();
    }

    @Test
    void withoutAFilterEveryRequestCarriesTheTokens() throws Exception {
        assertThat(sent(new FencingTokenClientInterceptor(), "https://anywhere.example/x"))
                .isEqualTo(FencingHeader.format(List.of(TOKEN)));
    }

    @Test
    void forHostsSendsOnlyToTheHostsNamed() throws Exception {
        FencingTokenClientInterceptor interceptor =
                FencingTokenClientInterceptor.forHosts(List.of("Ledger.internal", " billing:8443 "));
        String header = FencingHeader.format(List.of(TOKEN));
        assertThat(sent(interceptor, "http://ledger.internal:8080/entries")).isEqualTo(header);
        assertThat(sent(interceptor, "https://LEDGER.internal/entries")).isEqualTo(header);
        assertThat(sent(interceptor, "https://billing:8443/charge")).isEqualTo(header);
        assertThat(sent(interceptor, "https://billing/charge")).isNull();
        assertThat(sent(interceptor, "https://billing:9443/charge")).isNull();
        assertThat(sent(interceptor, "https://partner.example/webhook")).isNull();
        assertThat(sent(interceptor, "https://ledger.internal.partner.example/")).isNull();
    }

    @Test
    void aDefaultPortEntryMatchesAUriWithoutPort() throws Exception {
        FencingTokenClientInterceptor interceptor = FencingTokenClientInterceptor.forHosts(List.of("billing:443"));
        assertThat(sent(interceptor, "https://billing/charge")).isNotNull();
        assertThat(sent(interceptor, "http://billing/charge")).isNull();
    }

    @Test
    void noHostNamedSendsNowhereAndAPredicateDecides() throws Exception {
        assertThat(sent(FencingTokenClientInterceptor.forHosts(List.of()), "https://ledger.internal/")).isNull();
        FencingTokenClientInterceptor byPath =
                new FencingTokenClientInterceptor(request -> request.getURI().getPath().startsWith("/fenced/"));
        assertThat(sent(byPath, "https://a/fenced/x")).isNotNull();
        assertThat(sent(byPath, "https://a/open/x")).isNull();
    }
}
