package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.FencingConfigurationException;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * {@code fencing.web.client.propagate-to} for {@code WebClient}: Boot's {@code WebClient.Builder} sends the tokens of
 * the Reactor Context to the hosts named and to no other, and turns their fencing refusals into the library's
 * exceptions as error signals, counted on the context's {@code MeterRegistry}; no hosts, no customizer. One local
 * server answers as both {@code localhost} and {@code 127.0.0.1}, so only the host name decides.
 */
@ExtendWith(OutputCaptureExtension.class)
class FencingWebClientAutoConfigurationTest {

    private static final FencingToken TOKEN = new FencingToken("ledger", 7, "a");
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                    FencingPropagateToAutoConfiguration.class,
                    FencingWebClientAutoConfiguration.class, WebClientAutoConfiguration.class))
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
            if (path.equals("/stale")) {            // what a fenced service answers a stale token with
                byte[] body = ("{\"type\":\"https://fencing.dev/problems/stale-token\",\"title\":\"Stale fencing "
                        + "token\",\"status\":409,\"resource\":\"ledger\",\"presented\":\"" + TOKEN.toText()
                        + "\",\"maxSeen\":9,\"verdict\":\"stale\"}").getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("Content-Type", "application/problem+json");
                exchange.sendResponseHeaders(409, body.length);
                exchange.getResponseBody().write(body);
            } else {
                exchange.sendResponseHeaders(204, -1);
            }
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private Mono<Void> call(WebClient client, String host, String path) {
        return client.post().uri("http://" + host + ":" + server.getAddress().getPort() + path)
                .retrieve().toBodilessEntity().then();
    }

    /** WebClient follows redirects with the header too (a signing re-trial): warned about as for RestClient. */
    @Test
    @org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
    void followingRedirectsIsWarnedAbout(org.springframework.boot.test.system.CapturedOutput output) {
        runner.withPropertyValues("fencing.web.client.propagate-to=ledger.internal").run(context ->
                assertThat(context).hasNotFailed().hasBean("fencingWebClientCustomizer"));
        assertThat(output).contains("takes the Fencing-Token header along")
                .contains("spring.http.clients.redirects=dont-follow");
    }

    @Test
    void bootsWebClientBuilderSendsTheContextsTokensOnlyToTheHostsNamed() {
        runner.withPropertyValues("fencing.web.client.propagate-to=LOCALHOST, ledger.internal").run(context -> {
            assertThat(context).hasNotFailed().hasBean("fencingWebClientCustomizer");
            WebClient client = context.getBean(WebClient.Builder.class).build();
            call(client, "localhost", "/by-name").then(call(client, "127.0.0.1", "/by-address"))
                    .contextWrite(ReactiveFencing.bind(TOKEN)).block(TIMEOUT);
            assertThat(received).containsEntry("/by-name", FencingHeader.format(List.of(TOKEN)))
                    .containsEntry("/by-address", "");
        });
    }

    /**
     * From blocking code (the token bound on the calling thread), a request Boot's builder made that subscribes on
     * another thread (subscribeOn, a retry) sends the calling thread's token: the customizer records the thread that
     * built each request (a red-team review found such requests sent none, or the token of the thread they ran on).
     */
    @Test
    void bootsWebClientSendsTheBuildingThreadsTokenFromAnotherThread() {
        runner.withPropertyValues("fencing.web.client.propagate-to=localhost").run(context -> {
            WebClient client = context.getBean(WebClient.Builder.class).build();
            try (dev.fencing.context.FencingScope ignored = dev.fencing.context.FencingContext.bind(TOKEN)) {
                call(client, "localhost", "/elsewhere")
                        .subscribeOn(reactor.core.scheduler.Schedulers.boundedElastic()).block(TIMEOUT);
            }
            assertThat(received).containsEntry("/elsewhere", FencingHeader.format(List.of(TOKEN)));
        });
    }

    @Test
    void aRemoteRefusalBecomesTheLibrarysExceptionCounted() {
        runner.withPropertyValues("fencing.web.client.propagate-to=localhost")
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
                    WebClient client = context.getBean(WebClient.Builder.class).build();
                    StepVerifier.create(call(client, "localhost", "/stale").contextWrite(ReactiveFencing.bind(TOKEN)))
                            .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(StaleTokenException.class,
                                    stale -> assertThat(stale.maxSeen()).isEqualTo(9)))
                            .verify(TIMEOUT);
                    assertThat(context.getBean(MeterRegistry.class).find("fencing.remote.rejections").counter())
                            .isNotNull().satisfies(counter -> assertThat(counter.count()).isEqualTo(1.0));
                });
    }

    @Test
    void withoutFencingReactorThereIsNoCustomizerAndAWarning(CapturedOutput output) {
        runner.withPropertyValues("fencing.web.client.propagate-to=localhost")
                .withClassLoader(new FilteredClassLoader(ReactiveFencing.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("fencingWebClientCustomizer"));
        assertThat(output).contains("Boot's WebClient.Builder sends no tokens").contains("dev.fencing:fencing-reactor");
    }

    @Test
    void withoutHostsThereIsNoCustomizerAndNoTokenLeaves() {
        runner.run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean("fencingWebClientCustomizer");
            WebClient client = context.getBean(WebClient.Builder.class).build();
            call(client, "localhost", "/no-hosts").contextWrite(ReactiveFencing.bind(TOKEN)).block(TIMEOUT);
            assertThat(received).containsEntry("/no-hosts", "");
        });
        runner.withPropertyValues("fencing.enabled=false", "fencing.web.client.propagate-to=localhost")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("fencingWebClientCustomizer"));
    }

    @Test
    void anEntryThatCouldNeverMatchFailsStartupNamingThePropertyTheValueAndTheForm() {
        for (String entry : List.of("http://127.0.0.1:18081", "127.0.0.1:18081/internal")) {
            runner.withPropertyValues("fencing.web.client.propagate-to=localhost," + entry).run(context -> {
                assertThat(context).hasFailed();
                assertThat(configurationFailure(context.getStartupFailure()))
                        .hasMessageContaining("fencing.web.client.propagate-to entry '" + entry + "'")
                        .hasMessageContaining("host:port");
            });
        }
    }

    @Test
    void theHostsThatReceiveTokensAreLoggedOnceWithRestClientAndWebClientBothConfigured(CapturedOutput output) {
        runner.withConfiguration(AutoConfigurations.of(FencingRestClientAutoConfiguration.class))
                .withPropertyValues("fencing.web.client.propagate-to=ledger.internal, 127.0.0.1:18081")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasBean("fencingWebClientCustomizer")
                            .hasBean("fencingRestClientCustomizer");
                    assertThat(output.toString().split("Fencing tokens will be sent to \\[ledger.internal, "
                            + "127.0.0.1:18081\\]", -1)).hasSize(2);
                });
    }

    /** A trial's WebFlux application without spring-boot-starter-webclient started silently with a scheme entry. */
    @Test
    void withoutBootsClientSupportThePropertyFailsStartupInsteadOfBeingIgnored() {
        runner.withClassLoader(new org.springframework.boot.test.context.FilteredClassLoader(
                        FencingPropagateToAutoConfiguration.REST_CLIENT_SUPPORT,
                        FencingPropagateToAutoConfiguration.WEB_CLIENT_SUPPORT))
                .withPropertyValues("fencing.web.client.propagate-to=ledger.internal")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(configurationFailure(context.getStartupFailure()))
                            .hasMessageContaining("fencing.web.client.propagate-to is set ([ledger.internal])")
                            .hasMessageContaining("spring-boot-starter-restclient")
                            .hasMessageContaining("spring-boot-starter-webclient");
                });
        runner.withClassLoader(new org.springframework.boot.test.context.FilteredClassLoader(
                        FencingPropagateToAutoConfiguration.REST_CLIENT_SUPPORT,
                        FencingPropagateToAutoConfiguration.WEB_CLIENT_SUPPORT))
                .withPropertyValues("fencing.web.client.propagate-to=http://ledger:8080")
                .run(context -> assertThat(configurationFailure(context.getStartupFailure()))
                        .hasMessageContaining("http://ledger:8080"));
    }

    static Throwable configurationFailure(Throwable failure) {
        while (!(failure instanceof FencingConfigurationException) && failure.getCause() != null) {
            failure = failure.getCause();
        }
        assertThat(failure).isInstanceOf(FencingConfigurationException.class);
        return failure;
    }
}
