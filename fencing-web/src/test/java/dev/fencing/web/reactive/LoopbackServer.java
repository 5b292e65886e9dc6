package dev.fencing.web.reactive;

import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import java.time.Duration;

/** A Reactor Netty server on a free loopback port for one test class, and a plain WebClient for it. */
final class LoopbackServer implements AutoCloseable {

    private final DisposableServer server;

    LoopbackServer(HttpHandler handler) {
        server = HttpServer.create().host("127.0.0.1").port(0).handle(new ReactorHttpHandlerAdapter(handler))
                .bindNow(Duration.ofSeconds(20));
    }

    String baseUrl() {
        return "http://127.0.0.1:" + server.port();
    }

    WebClient client() {
        return WebClient.builder().baseUrl(baseUrl()).build();
    }

    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(10));
    }
}
