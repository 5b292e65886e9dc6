package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.context.FencingContext;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.web.client.RestClient;

/**
 * {@code fencing.web.client.propagate-to}: Boot's {@code RestClient.Builder} sends the bound tokens to the hosts named
 * and to no other; no hosts, no customizer. One local server answers as both {@code localhost} and {@code 127.0.0.1},
 * so only the host name decides.
 */
class FencingRestClientAutoConfigurationTest {

    private static final FencingToken TOKEN = new FencingToken("ledger", 7, "a");

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                    FencingRestClientAutoConfiguration.class, RestClientAutoConfiguration.class))
            .withPropertyValues("fencing.store.type=in-memory");

    private HttpServer server;
    /** The Fencing-Token header each path arrived with ("" for none). */
    private final Map<String, String> received = new ConcurrentHashMap<>();

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            String header = exchange.getRequestHeaders().getFirst(FencingHeader.NAME);
            received.put(exchange.getRequestURI().getPath(), header == null ? "" : header);
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    private void callBoth(RestClient client) {
        int port = server.getAddress().getPort();
        try (var ignored = FencingContext.bind(TOKEN)) {
            client.post().uri("http://localhost:" + port + "/by-name").retrieve().toBodilessEntity();
            client.post().uri("http://127.0.0.1:" + port + "/by-address").retrieve().toBodilessEntity();
        }
    }

    @Test
    void bootsRestClientBuilderSendsTheTokensOnlyToTheHostsNamed() {
        runner.withPropertyValues("fencing.web.client.propagate-to=LOCALHOST, ledger.internal").run(context -> {
            assertThat(context).hasNotFailed().hasBean("fencingRestClientCustomizer");
            callBoth(context.getBean(RestClient.Builder.class).build());
            assertThat(received).containsEntry("/by-name", FencingHeader.format(List.of(TOKEN)))
                    .containsEntry("/by-address", "");
        });
    }

    @Test
    void aHostWithAPortMatchesOnlyThatPort() {
        runner.withPropertyValues("fencing.web.client.propagate-to[0]=127.0.0.1:" + server.getAddress().getPort(),
                "fencing.web.client.propagate-to[1]=localhost:1").run(context -> {
            callBoth(context.getBean(RestClient.Builder.class).build());
            assertThat(received).containsEntry("/by-name", "")
                    .containsEntry("/by-address", FencingHeader.format(List.of(TOKEN)));
        });
    }

    @Test
    void noPropagateToNoCustomizerAndNoHeader() {
        runner.run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean("fencingRestClientCustomizer");
            callBoth(context.getBean(RestClient.Builder.class).build());
            assertThat(received).containsEntry("/by-name", "").containsEntry("/by-address", "");
        });
        runner.withPropertyValues("fencing.web.client.propagate-to=").run(context ->
                assertThat(context).hasNotFailed().doesNotHaveBean(RestClientCustomizer.class));
    }

    @Test
    void fencingEnabledFalseAddsNoCustomizer() {
        runner.withPropertyValues("fencing.enabled=false", "fencing.web.client.propagate-to=localhost")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("fencingRestClientCustomizer"));
    }
}
