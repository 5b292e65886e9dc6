package dev.fencing.web.reactive;

import dev.fencing.guard.UncheckedReceipts;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.testsupport.Await;
import dev.fencing.testsupport.LogRecords;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.logging.Level;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WebFlux filter reports the tokens of a writing request answered 2xx that no check presented (a reactive check
 * presents them from the Reactor context), as the servlet filter does; a read, a refusal and a checked write are not.
 */
@Timeout(60)
class UncheckedReceiptsWebFilterTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private HttpHandler app() {
        RouterFunction<ServerResponse> routes = RouterFunctions.route()
                .POST("/internal/accounts/{id}/unfenced", request -> ServerResponse.ok().bodyValue("written"))
                .POST("/internal/accounts/{id}/fenced", request -> Mono.deferContextual(context -> {
                    FencingToken token = ReactiveFencing.tokens(context).present("accounts:"
                            + request.pathVariable("id"));
                    return ServerResponse.ok().bodyValue(token == null ? "none" : "checked");
                }))
                .POST("/internal/accounts/{id}/refused", request -> ServerResponse.status(409).bodyValue("refused"))
                .GET("/internal/accounts/{id}", request -> ServerResponse.ok().bodyValue("read"))
                .build();
        return WebHttpHandlerBuilder.webHandler(RouterFunctions.toWebHandler(routes))
                .filter(FencingTokenWebFilter.forPaths("/internal/**").withMeterRegistry(registry)).build();
    }

    private double unchecked() {
        return registry.find(FencingMetrics.UNCHECKED_RECEIPTS).tag("resource", "accounts").tag("carrier", "http")
                .counters().stream().mapToDouble(Counter::count).sum();
    }

    private static int post(LoopbackServer server, String path, long id) {
        return server.client().post().uri(path)
                .header("Fencing-Token", new FencingToken("accounts:" + id, 34, "caller").toText())
                .exchangeToMono(response -> response.releaseBody().thenReturn(response.statusCode().value()))
                .block(Duration.ofSeconds(20));
    }

    @Test
    void aWriteThatNoCheckSawIsCountedAndLogged() throws InterruptedException {
        try (LoopbackServer server = new LoopbackServer(app());
             LogRecords logs = LogRecords.of(UncheckedReceipts.class)) {
            assertThat(post(server, "/internal/accounts/1/unfenced", 1)).isEqualTo(200);
            // reported when the exchange completes, after the client's answer: counted, then logged, on the server's
            // thread, so wait for both
            Await.until(() -> unchecked() == 1
                    && logs.records().stream().anyMatch(r -> r.getLevel() == Level.WARNING));
            // filtered on this request's resource: another test's server may still be logging its own report
            assertThat(logs.records()).filteredOn(r -> r.getLevel() == Level.WARNING)
                    .filteredOn(r -> r.getMessage().contains("'accounts:1'")).singleElement()
                    .satisfies(r -> assertThat(r.getMessage()).startsWith("POST /internal/accounts/{id}/unfenced "
                            + "received the fencing token of resource 'accounts:1' "
                            + "(value 34, holder 'caller')"));
        }
    }

    @Test
    void aCheckedWriteAReadAndARefusalAreNotReported() throws InterruptedException {
        try (LoopbackServer server = new LoopbackServer(app());
             LogRecords logs = LogRecords.of(UncheckedReceipts.class)) {
            assertThat(post(server, "/internal/accounts/2/fenced", 2)).isEqualTo(200);
            assertThat(post(server, "/internal/accounts/2/refused", 2)).isEqualTo(409);
            assertThat(Answer.get(server.client(), "/internal/accounts/2", "accounts:2#34@caller").status())
                    .isEqualTo(200);
            assertThat(post(server, "/internal/accounts/3/unfenced", 3)).isEqualTo(200); // the control, reported
            // counted, then logged: wait for the log too, so that it cannot land in the next test's capture
            Await.until(() -> unchecked() == 1 && logs.records().stream().anyMatch(r -> r.getLevel() == Level.WARNING));
            assertThat(unchecked()).as("only the control").isEqualTo(1);
            assertThat(logs.records()).filteredOn(r -> r.getLevel() == Level.WARNING).singleElement()
                    .satisfies(r -> assertThat(r.getMessage()).contains("'accounts:3'"));
        }
    }
}
