package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.context.FencingContext;
import dev.fencing.token.FencingToken;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.web.FencingExceptionAdvice;
import dev.fencing.web.FencingHeader;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
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
import org.springframework.boot.restclient.RestTemplateBuilder;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.restclient.autoconfigure.RestTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.ProblemDetail;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code fencing.web.client.propagate-to}: Boot's {@code RestClient.Builder} sends the bound tokens to the hosts named
 * and to no other, and turns their fencing refusals into the library's exceptions, counted on the context's
 * {@code MeterRegistry}; no hosts, no customizer. One local server answers as both {@code localhost} and
 * {@code 127.0.0.1}, so only the host name decides.
 */
class FencingRestClientAutoConfigurationTest {

    private static final FencingToken TOKEN = new FencingToken("ledger", 7, "a");

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                    FencingPropagateToAutoConfiguration.class,
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
            String path = exchange.getRequestURI().getPath();
            received.put(path, header == null ? "" : header);
            if (path.equals("/stale")) {            // what a fenced service's FencingExceptionAdvice answers
                byte[] body = adviceBody(new StaleTokenException("ledger:7", TOKEN, 9, "Ledger.write(long)"));
                exchange.getResponseHeaders().set("Content-Type", "application/problem+json");
                exchange.sendResponseHeaders(409, body.length);
                exchange.getResponseBody().write(body);
            } else if (path.equals("/plain-conflict")) {
                byte[] body = "already booked".getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("Content-Type", "text/plain");
                exchange.sendResponseHeaders(409, body.length);
                exchange.getResponseBody().write(body);
            } else {
                exchange.sendResponseHeaders(204, -1);
            }
            exchange.close();
        });
        server.start();
    }

    /** The body the real advice answers {@code rejection} with: its problem detail, members at the top level. */
    private static byte[] adviceBody(StaleTokenException rejection) {
        ProblemDetail problem = new FencingExceptionAdvice().rejected(rejection);
        Map<String, Object> members = new LinkedHashMap<>();
        members.put("type", problem.getType().toString());
        members.put("title", problem.getTitle());
        members.put("status", problem.getStatus());
        members.put("detail", problem.getDetail());
        members.putAll(problem.getProperties());
        return JsonMapper.builder().build().writeValueAsBytes(members);
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

    /**
     * The startup check's message promises RestTemplate with Boot's client support; a RestTemplate built from Boot's
     * RestTemplateBuilder sent no token at all (the starter customized only RestClient.Builder), so every fenced
     * call it made was refused as missing at the callee, and the callee's refusals were not mapped.
     */
    @Test
    void bootsRestTemplateBuilderSendsTheTokensOnlyToTheHostsNamedAndMapsTheirRefusals() {
        runner.withConfiguration(AutoConfigurations.of(RestTemplateAutoConfiguration.class))
                .withPropertyValues("fencing.web.client.propagate-to=localhost").run(context -> {
                    RestTemplate template = context.getBean(RestTemplateBuilder.class).build();
                    int port = server.getAddress().getPort();
                    try (var ignored = FencingContext.bind(TOKEN)) {
                        template.postForEntity("http://localhost:" + port + "/by-name", null, Void.class);
                        template.postForEntity("http://127.0.0.1:" + port + "/by-address", null, Void.class);
                        assertThat(catchThrowable(() -> template.postForEntity("http://localhost:" + port + "/stale",
                                null, Void.class))).isInstanceOf(StaleTokenException.class);
                    }
                    assertThat(received).containsEntry("/by-name", FencingHeader.format(List.of(TOKEN)))
                            .containsEntry("/by-address", "");
                });
    }

    /**
     * Boot's clients follow redirects by default, and a redirect from a listed host takes the header to any host (a
     * signing trial captured a token that way): startup warns unless redirects are off.
     */
    @Test
    @org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
    void followingRedirectsIsWarnedAboutAndNotWhenTheyAreOff(
            org.springframework.boot.test.system.CapturedOutput output) {
        runner.withPropertyValues("fencing.web.client.propagate-to=ledger.internal").run(context ->
                assertThat(context).hasNotFailed());
        assertThat(output).contains("a redirect from one of them to another host takes the Fencing-Token header along")
                .contains("spring.http.clients.redirects=dont-follow");
        assertThat(output.toString().split("takes the Fencing-Token header along", -1)).as("once per context")
                .hasSize(2);
        int before = output.toString().length();
        runner.withPropertyValues("fencing.web.client.propagate-to=ledger.internal",
                "spring.http.clients.redirects=dont-follow").run(context -> assertThat(context).hasNotFailed());
        assertThat(output.toString().substring(before)).doesNotContain("takes the Fencing-Token header along");
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

    private Throwable callStale(RestClient client, String host) {
        try (var ignored = FencingContext.bind(TOKEN)) {
            return catchThrowable(() -> client.post().uri("http://" + host + ":" + server.getAddress().getPort()
                    + "/stale").retrieve().toBodilessEntity());
        }
    }

    private static double remoteRejections(MeterRegistry registry, String outcome) {
        Counter counter = registry.find("fencing.remote.rejections").tag("resource", "ledger").tag("outcome", outcome)
                .counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void bootsRestClientMapsTheRemoteRefusalAndCountsItOnTheContextsRegistry() {
        runner.withPropertyValues("fencing.web.client.propagate-to=localhost")
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
                    RestClient client = context.getBean(RestClient.Builder.class).build();
                    MeterRegistry registry = context.getBean(MeterRegistry.class);

                    assertThat(callStale(client, "localhost")).isInstanceOfSatisfying(StaleTokenException.class, e -> {
                        assertThat(e.resource()).isEqualTo("ledger:7");
                        assertThat(e.presented()).isEqualTo(TOKEN);
                        assertThat(e.maxSeen()).isEqualTo(9);
                        assertThat(e.getMessage()).contains("localhost:" + server.getAddress().getPort() + "/stale");
                    });
                    assertThat(remoteRejections(registry, "stale")).isEqualTo(1);
                    assertThat(registry.find("fencing.remote.rejections").meters()).hasSize(1);

                    assertThat(callStale(client, "127.0.0.1")).as("a host the tokens are not sent to: untouched")
                            .isInstanceOf(HttpClientErrorException.Conflict.class);
                    int port = server.getAddress().getPort();
                    assertThat(catchThrowable(() -> client.post().uri("http://localhost:" + port + "/plain-conflict")
                            .retrieve().toBodilessEntity())).as("an unrelated 409: untouched")
                            .isInstanceOf(HttpClientErrorException.Conflict.class);
                    assertThat(remoteRejections(registry, "stale")).isEqualTo(1);
                });
    }

    @Test
    void withoutAMeterRegistryTheRefusalIsStillMapped() {
        runner.withPropertyValues("fencing.web.client.propagate-to=localhost").run(context -> {
            assertThat(context).doesNotHaveBean(MeterRegistry.class);
            assertThat(callStale(context.getBean(RestClient.Builder.class).build(), "localhost"))
                    .isInstanceOf(StaleTokenException.class);
        });
    }

    @Test
    void noPropagateToNoMapping() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            assertThat(context).doesNotHaveBean(RestClientCustomizer.class);
            assertThat(callStale(context.getBean(RestClient.Builder.class).build(), "localhost"))
                    .isInstanceOf(HttpClientErrorException.Conflict.class);
            assertThat(context.getBean(MeterRegistry.class).find("fencing.remote.rejections").meters()).isEmpty();
        });
    }

    @Test
    void fencingEnabledFalseAddsNoCustomizer() {
        runner.withPropertyValues("fencing.enabled=false", "fencing.web.client.propagate-to=localhost")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("fencingRestClientCustomizer"));
    }

    @Test
    void anEntryWithAUserInfoOrAQueryFailsStartupNamingThePropertyAndTheValue() {
        for (String entry : List.of("svc@ledger.internal", "ledger.internal?x=1")) {
            runner.withPropertyValues("fencing.web.client.propagate-to=" + entry).run(context -> {
                assertThat(context).hasFailed();
                assertThat(FencingWebClientAutoConfigurationTest.configurationFailure(context.getStartupFailure()))
                        .hasMessageContaining("fencing.web.client.propagate-to entry '" + entry + "'");
            });
        }
    }
}
