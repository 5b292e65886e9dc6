package dev.fencing.web.reactive;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebClient called from blocking code, its token bound on the calling thread: a retry subscribes again on the thread
 * that delivered the error (a timer, an event loop, a thread busy with another caller's fenced work), and
 * {@code subscribeOn} on another scheduler's. Every attempt carries the tokens of the thread that built the request,
 * never the tokens of the thread it happens to run on (a red-team review found retries sent none, or another caller's
 * newer token, with which a zombie's retried write would have been accepted).
 */
@Timeout(20)
class WebClientResubscriptionTest {

    private static final FencingToken CALLER = new FencingToken("accounts:1", 34, "client-7");
    private static final FencingToken OTHER = new FencingToken("accounts:1", 35, "client-8");

    private final List<String> headers = new CopyOnWriteArrayList<>();
    private final List<String> threads = new CopyOnWriteArrayList<>();

    /** 503 on the first attempt, answered on another thread (as a Netty event loop answers), then 200. */
    private ExchangeFunction flakyService() {
        AtomicInteger calls = new AtomicInteger();
        return request -> {
            headers.add(String.valueOf(request.headers().getFirst(FencingHeader.NAME)));
            threads.add(Thread.currentThread().getName());
            HttpStatus status = calls.getAndIncrement() == 0 ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.OK;
            return Mono.delay(Duration.ofMillis(20))
                    .map(tick -> ClientResponse.create(status).header("Content-Type", "text/plain").body("x").build());
        };
    }

    @Test
    void retriedRequestFromBlockingCodeCarriesTheCallersToken() {
        WebClient client = WebClient.builder().exchangeFunction(flakyService())
                .apply(new FencingTokenExchangeFilterFunction()).build();
        try (FencingScope ignored = FencingContext.bind(CALLER)) {
            client.post().uri("http://service-b/accounts/1").retrieve().toBodilessEntity()
                    .retryWhen(Retry.max(1)).block(Duration.ofSeconds(10));
        }
        // first attempt on the caller's thread carries the token; the retry, subscribed on Reactor's timer thread,
        // must carry it too (else the callee answers 428 for a call the caller made under its lock)
        assertThat(headers).as("headers sent per attempt, on threads %s", threads)
                .containsExactly(CALLER.toText(), CALLER.toText());
    }

    @Test
    void retriedRequestNeverCarriesAnotherThreadsToken() throws Exception {
        // the response of the first attempt is delivered by a thread that is inside another caller's fenced scope
        var other = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            AtomicInteger calls = new AtomicInteger();
            ExchangeFunction service = request -> {
                headers.add(String.valueOf(request.headers().getFirst(FencingHeader.NAME)));
                threads.add(Thread.currentThread().getName());
                if (calls.getAndIncrement() == 0) {
                    return Mono.<ClientResponse>create(sink -> other.execute(() -> {
                        try (FencingScope ignored = FencingContext.bind(OTHER)) { // another request's work
                            sink.success(ClientResponse.create(HttpStatus.SERVICE_UNAVAILABLE)
                                    .header("Content-Type", "text/plain").body("x").build());
                        }
                    }));
                }
                return Mono.just(ClientResponse.create(HttpStatus.OK).header("Content-Type", "text/plain")
                        .body("x").build());
            };
            WebClient client = WebClient.builder().exchangeFunction(service)
                    .apply(new FencingTokenExchangeFilterFunction()).build();
            try (FencingScope ignored = FencingContext.bind(CALLER)) {
                client.post().uri("http://service-b/accounts/1").retrieve().toBodilessEntity()
                        .retry(1).block(Duration.ofSeconds(10));
            }
            assertThat(headers).as("headers sent per attempt, on threads %s", threads)
                    .containsExactly(CALLER.toText(), CALLER.toText());
        } finally {
            other.shutdownNow();
        }
    }

    @Test
    void retryOverRealNettyCarriesTheCallersToken() {
        AtomicInteger calls = new AtomicInteger();
        org.springframework.http.server.reactive.HttpHandler handler = (request, response) -> {
            headers.add(String.valueOf(request.getHeaders().getFirst(FencingHeader.NAME)));
            response.setStatusCode(calls.getAndIncrement() == 0 ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.OK);
            return response.setComplete();
        };
        try (LoopbackServer server = new LoopbackServer(handler)) {
            WebClient client = WebClient.builder().baseUrl(server.baseUrl())
                    .apply(new FencingTokenExchangeFilterFunction()).build();
            try (FencingScope ignored = FencingContext.bind(CALLER)) {
                client.post().uri("/accounts/1").retrieve().toBodilessEntity()
                        .retryWhen(Retry.backoff(1, Duration.ofMillis(10))).block(Duration.ofSeconds(10));
            }
        }
        assertThat(headers).as("Fencing-Token received by the service per attempt")
                .containsExactly(CALLER.toText(), CALLER.toText());
    }

    /**
     * A request built before the scope and subscribed inside it, on the thread that built it, sends the tokens that
     * thread has bound when it subscribes (the documented reading on subscription); subscribed on another thread, the
     * building thread's tokens of the moment it built it: none here, so nothing is sent (the callee refuses a write).
     */
    @Test
    void aRequestBuiltBeforeTheScopeSendsTheBuildingThreadsTokensOnlyOnThatThread() {
        WebClient client = WebClient.builder().exchangeFunction(request -> {
            headers.add(String.valueOf(request.headers().getFirst(FencingHeader.NAME)));
            return Mono.just(ClientResponse.create(HttpStatus.OK).header("Content-Type", "text/plain").body("x")
                    .build());
        }).apply(new FencingTokenExchangeFilterFunction()).build();
        Mono<?> call = client.post().uri("http://service-b/accounts/1").retrieve().toBodilessEntity();
        try (FencingScope ignored = FencingContext.bind(CALLER)) {
            call.block(Duration.ofSeconds(10));
            call.subscribeOn(Schedulers.boundedElastic()).block(Duration.ofSeconds(10));
        }
        assertThat(headers).containsExactly(CALLER.toText(), "null");
    }

    /**
     * A second request built in a callback records the callback's thread, here busy with another caller's fenced work
     * (a re-trial saw it send that caller's newer token). With Reactor's automatic context propagation, as the docs
     * advise for such chains, {@code block()} puts the calling thread's tokens in the Reactor Context, which both
     * requests read first.
     */
    @Test
    void aChainBuiltInCallbacksCarriesTheCallersTokenWithAutomaticContextPropagation() throws Exception {
        var other = java.util.concurrent.Executors.newSingleThreadExecutor();
        reactor.core.publisher.Hooks.enableAutomaticContextPropagation();
        try {
            ExchangeFunction service = request -> {
                headers.add(String.valueOf(request.headers().getFirst(FencingHeader.NAME)));
                return Mono.<ClientResponse>create(sink -> other.execute(() -> {
                    try (FencingScope ignored = FencingContext.bind(OTHER)) { // another request's work
                        sink.success(ClientResponse.create(HttpStatus.OK).header("Content-Type", "text/plain")
                                .body("x").build());
                    }
                }));
            };
            WebClient client = WebClient.builder().exchangeFunction(service)
                    .apply(new FencingTokenExchangeFilterFunction()).build();
            try (FencingScope ignored = FencingContext.bind(CALLER)) {
                client.post().uri("http://service-b/accounts/1").retrieve().toBodilessEntity()
                        .then(Mono.defer(() -> client.post().uri("http://service-b/accounts/1/audit").retrieve()
                                .toBodilessEntity()))
                        .block(Duration.ofSeconds(10));
            }
            assertThat(headers).containsExactly(CALLER.toText(), CALLER.toText());
        } finally {
            reactor.core.publisher.Hooks.disableAutomaticContextPropagation();
            other.shutdownNow();
        }
    }

    @Test
    void requestSubscribedOnAnotherSchedulerCarriesTheCallersToken() {
        WebClient client = WebClient.builder().exchangeFunction(request -> {
            headers.add(String.valueOf(request.headers().getFirst(FencingHeader.NAME)));
            return Mono.just(ClientResponse.create(HttpStatus.OK).header("Content-Type", "text/plain").body("x")
                    .build());
        }).apply(new FencingTokenExchangeFilterFunction()).build();
        try (FencingScope ignored = FencingContext.bind(CALLER)) {
            client.post().uri("http://service-b/accounts/1").retrieve().toBodilessEntity()
                    .subscribeOn(Schedulers.boundedElastic()).block(Duration.ofSeconds(10));
        }
        assertThat(headers).containsExactly(CALLER.toText());
    }
}
