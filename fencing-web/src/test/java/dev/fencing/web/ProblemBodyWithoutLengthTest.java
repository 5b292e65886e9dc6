package dev.fencing.web;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import dev.fencing.web.reactive.FencingTokenExchangeFilterFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.client.SimpleClientHttpRequestFactory;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A 409 {@code application/problem+json} answer without {@code Content-Length} (chunked) from a host the tokens are
 * sent to: the client interceptor and the WebClient filter function read at most
 * {@link FencingTokenClientInterceptor#MAX_PROBLEM_BYTES} (and the buffer that passes it) to tell a refusal, and past
 * that pass the answer on with its body intact, read from the start, without waiting for the rest. A body that never
 * ends (here: 100 KiB, then the server waits) proves it: a client that buffered the whole body before deciding would
 * never answer, and would hold all of a huge body in memory.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class ProblemBodyWithoutLengthTest {

    private static final FencingToken TOKEN = new FencingToken("accounts:1", 34, "client-7");
    private static final int SENT = 100 * 1024;   // past the bound
    private static final String STALE = "{\"type\":\"https://fencing.dev/problems/stale-token\",\"title\":\"Stale "
            + "fencing token\",\"status\":409,\"resource\":\"accounts:1\",\"presented\":\"accounts:1#34@client-7\","
            + "\"maxSeen\":40,\"verdict\":\"stale\"}";

    private final CountDownLatch release = new CountDownLatch(1);
    private final ExecutorService handlers = Executors.newCachedThreadPool();
    private HttpServer server;
    private String baseUrl;

    /** A JSON text of exactly {@code size} bytes that is not a refusal's (its padding is never parsed as one). */
    private static byte[] largeBody(int size) {
        byte[] body = new byte[size];
        java.util.Arrays.fill(body, (byte) 'x');
        byte[] head = "{\"type\":\"https://fencing.dev/problems/stale-token\",\"pad\":\""
                .getBytes(StandardCharsets.UTF_8);
        System.arraycopy(head, 0, body, 0, head.length);
        body[size - 2] = '"';
        body[size - 1] = '}';
        return body;
    }

    @BeforeAll
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(handlers);
        server.createContext("/stalled", exchange -> answer(exchange, largeBody(SENT), true));
        server.createContext("/large", exchange -> answer(exchange, largeBody(1024 * 1024), false));
        server.createContext("/stale", exchange -> answer(exchange, STALE.getBytes(StandardCharsets.UTF_8), false));
        server.start();
        baseUrl = "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Answers 409 problem+json, chunked (no Content-Length), in 8 KiB writes; then waits, when {@code stall}. */
    private void answer(HttpExchange exchange, byte[] body, boolean stall) throws IOException {
        try (InputStream ignored = exchange.getRequestBody()) {
            ignored.readAllBytes();
        }
        exchange.getResponseHeaders().set("Content-Type", "application/problem+json");
        exchange.sendResponseHeaders(409, 0);
        OutputStream out = exchange.getResponseBody();
        for (int at = 0; at < body.length; at += 8192) {
            out.write(body, at, Math.min(8192, body.length - at));
            out.flush();
        }
        if (stall) {
            try {
                release.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        exchange.close();
    }

    @AfterAll
    void stop() {
        release.countDown();
        server.stop(0);
        handlers.shutdownNow();
    }

    private RestClient restClient() {
        return RestClient.builder().baseUrl(baseUrl).requestFactory(new SimpleClientHttpRequestFactory())
                .requestInterceptor(new FencingTokenClientInterceptor()).build();
    }

    private WebClient webClient() {
        return WebClient.builder().baseUrl(baseUrl).apply(new FencingTokenExchangeFilterFunction()).build();
    }

    @Test
    void webClientPassesOnAnEndlessProblemBodyOnceItIsPastTheBoundWithoutWaitingForItsEnd() {
        String head = webClient().post().uri("/stalled")
                .exchangeToMono(response -> DataBufferUtils.join(DataBufferUtils.takeUntilByteCount(
                                response.bodyToFlux(DataBuffer.class), SENT))
                        .map(buffer -> {
                            String text = buffer.toString(StandardCharsets.UTF_8);
                            DataBufferUtils.release(buffer);
                            return response.statusCode().value() + " " + text;
                        }))
                .contextWrite(ReactiveFencing.bind(TOKEN))
                .block(Duration.ofSeconds(20));

        assertThat(head).isEqualTo("409 " + new String(largeBody(SENT), StandardCharsets.UTF_8));
    }

    @Test
    void webClientPassesOnALargeProblemBodyIntactAndStillMapsASmallRefusal() {
        String large = webClient().post().uri("/large")
                .exchangeToMono(response -> DataBufferUtils.join(response.bodyToFlux(DataBuffer.class)).map(buffer -> {
                    String text = buffer.toString(StandardCharsets.UTF_8);
                    DataBufferUtils.release(buffer);
                    return text;
                }))
                .contextWrite(ReactiveFencing.bind(TOKEN))
                .block(Duration.ofSeconds(20));
        assertThat(large).isEqualTo(new String(largeBody(1024 * 1024), StandardCharsets.UTF_8));

        assertThatThrownBy(() -> webClient().post().uri("/stale").retrieve().toBodilessEntity()
                .contextWrite(ReactiveFencing.bind(TOKEN)).block(Duration.ofSeconds(20)))
                .isInstanceOfSatisfying(StaleTokenException.class, e -> assertThat(e.maxSeen()).isEqualTo(40));
    }

    @Test
    void restClientPassesOnAnEndlessProblemBodyOnceItIsPastTheBoundWithoutWaitingForItsEnd() {
        try (FencingScope ignored = FencingContext.bind(TOKEN)) {
            String head = restClient().post().uri("/stalled").exchange((request, response) -> {
                byte[] read = response.getBody().readNBytes(SENT);
                return response.getStatusCode().value() + " " + new String(read, StandardCharsets.UTF_8);
            }, false);
            assertThat(head).isEqualTo("409 " + new String(largeBody(SENT), StandardCharsets.UTF_8));
        }
    }

    @Test
    void restClientPassesOnALargeProblemBodyIntactAndStillMapsASmallRefusal() {
        try (FencingScope ignored = FencingContext.bind(TOKEN)) {
            String large = restClient().post().uri("/large").exchange((request, response) ->
                    new String(response.getBody().readAllBytes(), StandardCharsets.UTF_8));
            assertThat(large).isEqualTo(new String(largeBody(1024 * 1024), StandardCharsets.UTF_8));

            assertThatThrownBy(() -> restClient().post().uri("/stale").retrieve().toBodilessEntity())
                    .isInstanceOfSatisfying(StaleTokenException.class, e -> assertThat(e.maxSeen()).isEqualTo(40));
        }
    }
}
