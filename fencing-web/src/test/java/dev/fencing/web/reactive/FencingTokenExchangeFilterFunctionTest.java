package dev.fencing.web.reactive;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.FencingSnapshot;
import dev.fencing.context.TokenUse;
import dev.fencing.context.MissingTokenException;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import dev.fencing.web.FencingTokenClientInterceptor;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link FencingTokenExchangeFilterFunction} against a stub exchange: which tokens it sends (the Reactor Context's,
 * else the subscribing thread's, read on subscription), to which requests, and how it turns a remote refusal into the
 * library's exception while leaving every other answer readable.
 */
class FencingTokenExchangeFilterFunctionTest {

    private static final FencingToken ACCOUNTS = new FencingToken("accounts:1", 34, "client-7");
    private static final FencingToken ORDERS = new FencingToken("orders:9", 2, "client-7");
    private static final String PROBLEM_JSON = "application/problem+json";

    private final AtomicReference<ClientRequest> sent = new AtomicReference<>();

    /** An exchange that records the request and answers with {@code status}, {@code contentType} and {@code body}. */
    private ExchangeFunction answering(HttpStatus status, String contentType, String body) {
        return request -> {
            sent.set(request);
            return Mono.just(ClientResponse.create(status).header("Content-Type", contentType).body(body).build());
        };
    }

    private ExchangeFunction ok() {
        return answering(HttpStatus.OK, "text/plain", "done");
    }

    private static ClientRequest post(String uri) {
        return ClientRequest.create(HttpMethod.POST, URI.create(uri)).build();
    }

    private List<FencingToken> sentTokens() {
        List<String> fields = sent.get().headers().getOrEmpty(FencingHeader.NAME);
        return FencingHeader.parse(fields);
    }

    @Test
    void sendsTheTokensOfTheReactorContext() {
        new FencingTokenExchangeFilterFunction().filter(post("http://ledger.internal/pay"), ok())
                .contextWrite(ReactiveFencing.bind(ACCOUNTS, ORDERS))
                .block(Duration.ofSeconds(10));

        assertThat(sentTokens()).containsExactlyInAnyOrder(ACCOUNTS, ORDERS);
        assertThat(sent.get().headers().get(FencingHeader.NAME)).hasSize(1);
    }

    /**
     * Spring's Kotlin extensions ({@code awaitBody}) make the request's context with {@code toReactorContext}: the
     * coroutine's Reactor context with the awaiting thread's context-propagation values put over it. Here the
     * coroutine (a lock's body) has the token in its Reactor context, its thread has none bound.
     */
    @Test
    void sendsACoroutinesTokensThatSpringsKotlinExtensionsHidUnderTheAwaitingThreadsEmptyOnes() {
        kotlin.coroutines.CoroutineContext coroutine = kotlinx.coroutines.reactor.ReactorContextKt
                .asCoroutineContext(reactor.util.context.Context.of(ReactiveFencing.CONTEXT_KEY,
                        FencingSnapshot.empty().withLocal(ACCOUNTS)));
        assertThat(FencingContext.isEmpty()).isTrue();
        reactor.util.context.Context requestContext = org.springframework.web.reactive.function.client
                .WebClientExtensionsKt.toReactorContext(coroutine).getContext();
        assertThat(ReactiveFencing.tokens(requestContext).values()).as("what Spring's extension leaves").isEmpty();

        new FencingTokenExchangeFilterFunction().filter(post("http://ledger.internal/pay"), ok())
                .contextWrite(requestContext)
                .block(Duration.ofSeconds(10));

        assertThat(sentTokens()).containsExactly(ACCOUNTS);
    }

    @Test
    void aCoroutineWithoutTokensSendsNone() {
        kotlin.coroutines.CoroutineContext coroutine = kotlinx.coroutines.reactor.ReactorContextKt
                .asCoroutineContext(reactor.util.context.Context.of("other", "value"));
        reactor.util.context.Context requestContext = org.springframework.web.reactive.function.client
                .WebClientExtensionsKt.toReactorContext(coroutine).getContext();

        new FencingTokenExchangeFilterFunction().filter(post("http://ledger.internal/pay"), ok())
                .contextWrite(requestContext)
                .block(Duration.ofSeconds(10));

        assertThat(sent.get().headers().containsHeader(FencingHeader.NAME)).isFalse();
    }

    @Test
    void sendingAnAcquiredLocksTokenCountsAsPresentingIt() {
        TokenUse fromContext = new TokenUse();
        new FencingTokenExchangeFilterFunction().filter(post("http://ledger.internal/pay"), ok())
                .contextWrite(context -> context.put(ReactiveFencing.CONTEXT_KEY,
                        FencingSnapshot.empty().withAcquired(ACCOUNTS, fromContext)))
                .block(Duration.ofSeconds(10));
        assertThat(sentTokens()).containsExactly(ACCOUNTS);
        assertThat(fromContext.isUsed()).isTrue();

        TokenUse fromThread = new TokenUse();
        try (FencingScope ignored = FencingContext.bindAcquired(ORDERS, fromThread)) {
            FencingTokenExchangeFilterFunction.forHosts(List.of("ledger.internal"))
                    .filter(post("http://partner.example/hook"), ok()).block(Duration.ofSeconds(10));
            assertThat(fromThread.isUsed()).isFalse(); // not sent there
            new FencingTokenExchangeFilterFunction().filter(post("http://ledger.internal/pay"), ok())
                    .block(Duration.ofSeconds(10));
        }
        assertThat(fromThread.isUsed()).isTrue();

        TokenUse unanswered = new TokenUse();
        Mono<ClientResponse> refused = new FencingTokenExchangeFilterFunction()
                .filter(post("http://ledger.internal/pay"),
                request -> Mono.error(new java.net.ConnectException("Connection refused")));
        try (FencingScope ignored = FencingContext.bindAcquired(ORDERS, unanswered)) {
            assertThatThrownBy(() -> refused.block(Duration.ofSeconds(10))).hasRootCauseInstanceOf(
                    java.net.ConnectException.class);
        }
        assertThat(unanswered.isUsed()).as("a request that never reached the service").isFalse();
    }

    @Test
    void replacesAHandSetHeaderWithTheContextTokens() {
        ClientRequest request = ClientRequest.create(HttpMethod.POST, URI.create("http://ledger.internal/pay"))
                .header(FencingHeader.NAME, "accounts:1#1@someone-else").build();

        new FencingTokenExchangeFilterFunction().filter(request, ok())
                .contextWrite(ReactiveFencing.bind(ACCOUNTS)).block(Duration.ofSeconds(10));

        assertThat(sentTokens()).containsExactly(ACCOUNTS);
    }

    @Test
    void fallsBackToTheThreadBoundTokensReadOnSubscription() {
        Mono<ClientResponse> call = new FencingTokenExchangeFilterFunction().filter(post("http://ledger.internal/pay"),
                ok());
        try (FencingScope ignored = FencingContext.bind(ORDERS)) {
            call.block(Duration.ofSeconds(10));    // assembled before anything was bound
        }

        assertThat(sentTokens()).containsExactly(ORDERS);
    }

    @Test
    void aContextWithItsOwnTokenSetHidesTheThreadBoundTokens() {
        try (FencingScope ignored = FencingContext.bind(ORDERS)) {
            new FencingTokenExchangeFilterFunction().filter(post("http://ledger.internal/pay"), ok())
                    .contextWrite(ReactiveFencing.bindRemote(List.of())).block(Duration.ofSeconds(10));
        }

        assertThat(sent.get().headers().containsHeader(FencingHeader.NAME)).isFalse();
    }

    @Test
    void withoutAnyTokenNoHeaderIsSent() {
        new FencingTokenExchangeFilterFunction().filter(post("http://ledger.internal/pay"), ok())
                .block(Duration.ofSeconds(10));

        assertThat(sent.get().headers().containsHeader(FencingHeader.NAME)).isFalse();
    }

    @Test
    void forHostsSendsOnlyToTheHostsNamedAndMapsOnlyTheirAnswers() {
        FencingTokenExchangeFilterFunction filter = FencingTokenExchangeFilterFunction.forHosts(
                List.of(" Ledger.Internal ", "audit.internal:8443"));
        ExchangeFunction stale = answering(HttpStatus.CONFLICT, PROBLEM_JSON, staleProblem());

        ClientResponse elsewhere = filter.filter(post("http://search.example/pay"), stale)
                .contextWrite(ReactiveFencing.bind(ACCOUNTS)).block(Duration.ofSeconds(10));
        assertThat(sent.get().headers().containsHeader(FencingHeader.NAME)).isFalse();
        assertThat(elsewhere.statusCode().value()).isEqualTo(409);

        filter.filter(post("https://audit.internal/pay"), ok()).contextWrite(ReactiveFencing.bind(ACCOUNTS))
                .block(Duration.ofSeconds(10));
        assertThat(sent.get().headers().containsHeader(FencingHeader.NAME)).isFalse();   // port 443, not 8443

        filter.filter(post("https://audit.internal:8443/pay"), ok()).contextWrite(ReactiveFencing.bind(ACCOUNTS))
                .block(Duration.ofSeconds(10));
        assertThat(sentTokens()).containsExactly(ACCOUNTS);

        filter.filter(post("http://ledger.internal:8080/pay"), ok()).contextWrite(ReactiveFencing.bind(ORDERS))
                .block(Duration.ofSeconds(10));
        assertThat(sentTokens()).containsExactly(ORDERS);
    }

    private static String staleProblem() {
        return "{\"type\":\"https://fencing.dev/problems/stale-token\",\"title\":\"Stale fencing token\","
                + "\"status\":409,\"detail\":\"stale\",\"resource\":\"accounts:1\","
                + "\"presented\":\"accounts:1#34@client-7\",\"maxSeen\":40,\"verdict\":\"stale\"}";
    }

    @Test
    void aRemoteStaleProblemBecomesAStaleTokenExceptionCounted() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        FencingTokenExchangeFilterFunction filter = new FencingTokenExchangeFilterFunction()
                .withMeterRegistry(meters);

        StepVerifier.create(filter.filter(post("http://ledger.internal:8080/pay?x=1"),
                        answering(HttpStatus.CONFLICT, PROBLEM_JSON + ";charset=UTF-8", staleProblem()))
                        .contextWrite(ReactiveFencing.bind(ACCOUNTS)))
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOfSatisfying(StaleTokenException.class,
                        e -> {
                            assertThat(e.resource()).isEqualTo("accounts:1");
                            assertThat(e.presented()).isEqualTo(ACCOUNTS);
                            assertThat(e.maxSeen()).isEqualTo(40);
                            assertThat(e.operation()).isEqualTo("POST http://ledger.internal:8080/pay (remote)");
                            assertThat(e.getCause()).isInstanceOfSatisfying(WebClientResponseException.class,
                                    cause -> {
                                        assertThat(cause.getStatusCode().value()).isEqualTo(409);
                                        assertThat(cause.getResponseBodyAsString()).isEqualTo(staleProblem());
                                    });
                        }))
                .verify(Duration.ofSeconds(10));

        assertThat(meters.get(FencingTokenClientInterceptor.REMOTE_REJECTIONS).tag("resource", "accounts")
                .tag("outcome", "stale").counter().count()).isEqualTo(1.0);
    }

    @Test
    void remoteForgedAndMissingProblemsBecomeTheirExceptions() {
        String forged = "{\"type\":\"https://fencing.dev/problems/forged-token\",\"title\":\"Forged fencing token\","
                + "\"status\":403,\"resource\":\"accounts:1\",\"presented\":\"accounts:1#34@client-7\","
                + "\"verdict\":\"forged\"}";
        StepVerifier.create(new FencingTokenExchangeFilterFunction().filter(post("http://ledger.internal/pay"),
                        answering(HttpStatus.FORBIDDEN, PROBLEM_JSON, forged)))
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOfSatisfying(ForgedTokenException.class,
                        e -> assertThat(e.presented()).isEqualTo(ACCOUNTS)))
                .verify(Duration.ofSeconds(10));

        String missing = "{\"type\":\"https://fencing.dev/problems/missing-token\",\"status\":428,"
                + "\"resource\":\"accounts:2\"}";
        StepVerifier.create(new FencingTokenExchangeFilterFunction().filter(post("http://ledger.internal/pay"),
                        answering(HttpStatus.PRECONDITION_REQUIRED, PROBLEM_JSON, missing)))
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOfSatisfying(MissingTokenException.class,
                        e -> assertThat(e.resource()).isEqualTo("accounts:2")))
                .verify(Duration.ofSeconds(10));
    }

    @Test
    void aProblemAnswerWithoutBodyReachesTheClient() {
        ClientResponse response = new FencingTokenExchangeFilterFunction().filter(post("http://ledger.internal/pay"),
                        request -> Mono.just(ClientResponse.create(HttpStatus.CONFLICT)
                                .header("Content-Type", PROBLEM_JSON).build()))
                .block(Duration.ofSeconds(10));

        assertThat(response.statusCode().value()).isEqualTo(409);
        assertThat(response.bodyToMono(String.class).defaultIfEmpty("").block(Duration.ofSeconds(10))).isEmpty();
    }

    @Test
    void otherAnswersReachTheClientWithTheirBodyIntact() {
        String setAside = "{\"type\":\"https://fencing.dev/problems/remote-token-set-aside\",\"status\":409,"
                + "\"resource\":\"accounts:1\",\"presentedValue\":34}";
        record Case(HttpStatus status, String contentType, String body) {
        }
        for (Case answer : List.of(new Case(HttpStatus.CONFLICT, PROBLEM_JSON, setAside),
                new Case(HttpStatus.CONFLICT, "application/json", staleProblem()),
                new Case(HttpStatus.FORBIDDEN, PROBLEM_JSON, "not json"),
                new Case(HttpStatus.CONFLICT, PROBLEM_JSON, "{\"type\":\"https://x.example/other\"}"),
                new Case(HttpStatus.OK, PROBLEM_JSON, staleProblem()))) {
            ClientResponse response = new FencingTokenExchangeFilterFunction()
                    .filter(post("http://ledger.internal/pay"),
                            answering(answer.status(), answer.contentType(), answer.body()))
                    .block(Duration.ofSeconds(10));

            assertThat(response.statusCode().value()).isEqualTo(answer.status().value());
            assertThat(response.bodyToMono(String.class).block(Duration.ofSeconds(10))).as(answer.toString())
                    .isEqualTo(answer.body());
        }
    }
}
