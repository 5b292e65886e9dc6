package dev.fencing.web.reactive;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.LeftScopes;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.testsupport.LogRecords;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebHandler;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Level;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A handler that leaves a binding open on a Reactor Netty event-loop thread: without the filter the next request on
 * that thread runs under its token (what a reactive fenced call it assembles there would take as its caller's); with
 * it, the token is closed when that request starts, logged at ERROR and counted. A request run on a caller's own
 * (blocking) thread keeps the caller's binding.
 */
@Timeout(60)
class LeftBindingsWebFilterTest {

    private static final FencingToken LEAKED = new FencingToken("accounts:1", 7, "leaker");

    /** What each {@code /next} request found bound for accounts:1 on its thread, and the thread. */
    private final List<String> seen = new CopyOnWriteArrayList<>();

    private final WebHandler handler = exchange -> {
        if (exchange.getRequest().getPath().value().equals("/leak")) {
            FencingContext.bind(LEAKED); // never closed
        } else {
            seen.add(FencingContext.current("accounts:1") + " on " + Thread.currentThread().getName());
        }
        return Mono.empty();
    };

    @AfterEach
    void nothingLeftHere() {
        assertThat(FencingContext.closeAll()).isEmpty();
    }

    @Test
    void withoutTheFilterTheNextRequestOnTheEventLoopRunsUnderTheLeftToken() throws Exception {
        assertThat(leakOnTheLoopThenRequest(List.of())).singleElement().asString()
                .startsWith(LEAKED + " on leak-test");
    }

    /**
     * When the leaking exchange ends on the event loop, what it left is closed there, before the loop runs other
     * work (another request's continuation), and named with its request.
     */
    @Test
    void theFilterClosesWhatAnExchangeLeftWhenItEnds() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        LoopResources loop = LoopResources.create("leak-end-test", 1, true);
        DisposableServer server = server(loop, List.of(new LeftBindingsWebFilter().withMeterRegistry(registry)));
        try (LogRecords logs = LogRecords.of(LeftScopes.class)) {
            WebClient.create("http://127.0.0.1:" + server.port()).post().uri("/leak").retrieve().toBodilessEntity()
                    .block(Duration.ofSeconds(10));
            // other work on the same loop, no request started since
            String seen = loop.onServer(true).next().submit(() -> FencingContext.current("accounts:1") + " on "
                    + Thread.currentThread().getName()).get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(seen).startsWith("null on leak-end-test");
            assertThat(logs.records()).singleElement().satisfies(r -> assertThat(r.getMessage())
                    .startsWith("Request POST /leak left fencing tokens bound on its thread (leak-end-test"));
        } finally {
            server.disposeNow(Duration.ofSeconds(10));
            loop.disposeLater().block(Duration.ofSeconds(10));
        }
        assertThat(registry.get(FencingMetrics.LEFT_SCOPES).tag("carrier", "http").counter().count()).isEqualTo(1);
    }

    @Test
    void theFilterClosesWhatEarlierWorkLeftOnTheEventLoopAndLogsAndCountsIt() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (LogRecords logs = LogRecords.of(LeftScopes.class)) {
            List<String> next = leakOnTheLoopThenRequest(
                    List.of(new LeftBindingsWebFilter().withMeterRegistry(registry)));
            assertThat(next).singleElement().asString().startsWith("null on leak-test");
            assertThat(logs.records()).singleElement().satisfies(r -> {
                assertThat(r.getLevel()).isEqualTo(Level.SEVERE);
                assertThat(r.getMessage()).startsWith(LeftBindingsWebFilter.PLACE + " left fencing tokens bound on "
                        + "its thread (leak-test").contains(LEAKED.toString()).contains("FencingContext.run");
            });
        }
        assertThat(registry.get(FencingMetrics.LEFT_SCOPES).tag("carrier", "http").counter().count()).isEqualTo(1);
    }

    /** A request run on a blocking thread (a test's, inside its own binding) keeps that binding. */
    @Test
    void aRequestOnABlockingThreadKeepsItsCallersBinding() {
        FencingToken callers = new FencingToken("accounts:1", 9, "test");
        WebFilter filter = new LeftBindingsWebFilter();
        try (FencingScope ignored = FencingContext.bind(callers)) {
            filter.filter(MockServerWebExchange.from(MockServerHttpRequest.post("/next")), handler::handle)
                    .block(Duration.ofSeconds(10));
            assertThat(FencingContext.current("accounts:1")).isEqualTo(callers);
        }
        assertThat(seen).singleElement().asString().startsWith(callers + " on ");
    }

    /** A server of {@link #handler} with {@code filters} on {@code loop}. */
    private DisposableServer server(LoopResources loop, List<WebFilter> filters) {
        return HttpServer.create().host("127.0.0.1").port(0).runOn(loop)
                .handle(new ReactorHttpHandlerAdapter(WebHttpHandlerBuilder.webHandler(handler)
                        .filters(list -> list.addAll(filters)).build()))
                .bindNow(Duration.ofSeconds(20));
    }

    /**
     * Work on the loop that binds and leaves its scope (no request of the server's), then {@code /next}, on a server
     * of one event-loop thread with {@code filters}.
     */
    private List<String> leakOnTheLoopThenRequest(List<WebFilter> filters) throws Exception {
        LoopResources loop = LoopResources.create("leak-test", 1, true);
        DisposableServer server = server(loop, filters);
        try {
            loop.onServer(true).next().submit(() -> FencingContext.bind(LEAKED))
                    .get(10, java.util.concurrent.TimeUnit.SECONDS);
            WebClient.create("http://127.0.0.1:" + server.port()).post().uri("/next").retrieve().toBodilessEntity()
                    .block(Duration.ofSeconds(10));
            return List.copyOf(seen);
        } finally {
            server.disposeNow(Duration.ofSeconds(10));
            loop.disposeLater().block(Duration.ofSeconds(10));
        }
    }
}
