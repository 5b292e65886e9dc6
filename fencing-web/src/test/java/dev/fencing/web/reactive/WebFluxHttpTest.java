package dev.fencing.web.reactive;

import dev.fencing.context.MissingTokenException;
import dev.fencing.guard.InvalidKeyException;
import dev.fencing.guard.RemoteTokenSetAsideException;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.store.FenceStoreException;
import dev.fencing.store.TransientFenceFailure;
import dev.fencing.token.FencingToken;
import dev.fencing.web.internal.FencingProblems;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.config.EnableWebFlux;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux application on a real Reactor Netty server, an annotated controller behind
 * {@link FencingTokenWebFilter} with {@link FencingWebExceptionHandler} imported: the library's exceptions, thrown or
 * signalled, answered with the servlet advice's problems; and the round trip with a {@code WebClient} carrying
 * {@link FencingTokenExchangeFilterFunction}: the token bound in the client's Reactor Context arrives in the handler's,
 * and a refusal there comes back to the client as the library's exception.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WebFluxHttpTest {

    static final FencingToken PRESENTED = new FencingToken("accounts:1", 34, "client-7");
    static final AtomicInteger ECHOED = new AtomicInteger();

    /** A test-local transient failure, as the JDBC store's busy/conflict exceptions are. */
    static final class Busy extends RuntimeException implements TransientFenceFailure {
        Busy() {
            super("row lock timeout on fence table t_fence (SQLState 55P03)");
        }

        @Override
        public Reason reason() {
            return Reason.BUSY;
        }

        @Override
        public String resource() {
            return "accounts:1";
        }

        @Override
        public FencingToken presented() {
            return PRESENTED;
        }
    }

    @RestController
    static class Ledger {

        @GetMapping("/internal/echo")
        Mono<String> echo() {
            return Mono.deferContextual(context -> {
                ECHOED.incrementAndGet();
                return Mono.just(ReactiveFencing.tokens(context).values().stream()
                        .map(token -> token.toText() + (ReactiveFencing.tokens(context).isRemote(token.resource())
                                ? " remote" : " local"))
                        .collect(Collectors.joining(",", "[", "]")));
            });
        }

        /** Signals the exception named by {@code kind}; "thrown-stale" throws it from the handler method itself. */
        @GetMapping({"/internal/fail/{kind}", "/public/fail/{kind}"})
        Mono<String> fail(@PathVariable String kind) {
            if (kind.equals("thrown-stale")) {
                throw stale();
            }
            return Mono.deferContextual(context -> Mono.error(switch (kind) {
                case "stale" -> {
                    FencingToken token = ReactiveFencing.current(context, "accounts:1");
                    yield TokenRejectedException.of("accounts:1", token == null ? PRESENTED : token, 40,
                            Verdict.REJECT_STALE, "Ledger.pay");
                }
                case "duplicate" -> TokenRejectedException.of("accounts:1", PRESENTED, 34, Verdict.REJECT_DUPLICATE,
                        "Ledger.pay");
                case "forged" -> new ForgedTokenException("accounts:1", PRESENTED, "unsigned", "Ledger.pay");
                case "missing" -> new MissingTokenException("accounts:1", "Ledger.pay");
                case "set-aside" -> new RemoteTokenSetAsideException("accounts:1", "Ledger.pay", 34);
                case "invalid-key" -> new InvalidKeyException("accounts", "key #account evaluated to null");
                case "store" -> new FenceStoreException("accounts:1", PRESENTED, "SELECT max_seen FROM secret_table",
                        null);
                case "lock" -> new LockAcquisitionException("accounts:1", "zk://10.0.0.7:2181 timed out");
                case "lock-broken" -> new LockAcquisitionException("accounts:1", "lease table secret_lease is gone",
                        null, false);
                case "busy" -> new Busy();
                default -> new IllegalStateException("not the library's");
            }));
        }

        private static StaleTokenException stale() {
            return (StaleTokenException) TokenRejectedException.of("accounts:1", PRESENTED, 40, Verdict.REJECT_STALE,
                    "Ledger.pay");
        }
    }

    @Configuration
    @EnableWebFlux
    @Import({Ledger.class, FencingWebExceptionHandler.class})
    static class App {
        @Bean
        FencingTokenWebFilter fencingTokenWebFilter() {
            return FencingTokenWebFilter.forPaths("/internal/**");
        }
    }

    private AnnotationConfigApplicationContext context;
    private LoopbackServer server;
    private WebClient plain;
    private WebClient fencing;

    @BeforeAll
    void start() {
        context = new AnnotationConfigApplicationContext(App.class);
        server = new LoopbackServer(WebHttpHandlerBuilder.applicationContext(context).build());
        plain = server.client();
        fencing = WebClient.builder().baseUrl(server.baseUrl())
                .apply(FencingTokenExchangeFilterFunction.forHosts(List.of("127.0.0.1"))).build();
    }

    @AfterAll
    void stop() {
        if (server != null) {
            server.close();
        }
        if (context != null) {
            context.close();
        }
    }

    @Test
    void aStaleTokenSignalledOrThrownIsA409WithTheLibrarysProblem() {
        for (String kind : List.of("stale", "thrown-stale")) {
            Answer answer = Answer.get(plain, "/internal/fail/" + kind);

            assertThat(answer.status()).as(kind).isEqualTo(409);
            assertThat(answer.contentType()).isEqualTo("application/problem+json");
            Map<String, Object> problem = answer.problem();
            assertThat(problem).containsEntry("type", FencingProblems.STALE_TOKEN_TYPE.toString())
                    .containsEntry("title", "Stale fencing token").containsEntry("resource", "accounts:1")
                    .containsEntry("presented", "accounts:1#34@client-7").containsEntry("verdict", "stale");
            assertThat(problem.get("maxSeen")).hasToString("40");
            assertThat(problem.get("status")).hasToString("409");
        }
    }

    /**
     * A refused token the caller did not send (it sent one for ledger only: the refused accounts:1 token is the
     * service's own) is answered as the service's, without presented; the caller's own token is shown to it. The
     * answer used to show the service's token, holder id and all, as the caller's.
     */
    @Test
    void aRefusedTokenForAResourceTheCallerSentNoneForIsNotPresentedAsTheCallers() {
        Answer others = Answer.get(plain, "/internal/fail/stale", "ledger#5@caller");
        assertThat(others.status()).isEqualTo(409);
        assertThat(others.problem()).containsEntry("type", FencingProblems.STALE_TOKEN_TYPE.toString())
                .containsEntry("resource", "accounts:1").doesNotContainKey("presented");
        assertThat((String) others.problem().get("detail")).contains("its own, not the caller's")
                .doesNotContain("client-7");

        Answer callers = Answer.get(plain, "/internal/fail/stale", PRESENTED.toText());
        assertThat(callers.problem()).containsEntry("presented", "accounts:1#34@client-7");
    }

    /**
     * A missing token for a resource the caller sent one for is the service's fault (its write ran where the request's
     * Reactor Context did not reach): 500, not the 428 that would tell the caller to send what it sent.
     */
    @Test
    void aTokenTheCallerSentAndTheWriteDidNotFindIsLostNotMissing() {
        Answer sent = Answer.get(plain, "/internal/fail/missing", PRESENTED.toText());
        assertThat(sent.status()).isEqualTo(500);
        assertThat(sent.problem()).containsEntry("type", FencingProblems.LOST_TOKEN_TYPE.toString())
                .containsEntry("resource", "accounts:1");
        assertThat((String) sent.problem().get("detail")).contains("Reactor Context").doesNotContain("Ledger.pay");

        Answer other = Answer.get(plain, "/internal/fail/missing", "accounts:2#5@client-7");
        assertThat(other.status()).as("a token for another resource: the caller's is missing").isEqualTo(428);
        assertThat(Answer.get(plain, "/internal/fail/missing").status()).isEqualTo(428);
    }

    @Test
    void everyLibraryExceptionGetsTheServletAdvicesStatusTypeAndTitle() {
        record Expected(String kind, int status, String type, String title) {
        }
        for (Expected expected : List.of(
                new Expected("duplicate", 409, "https://fencing.dev/problems/duplicate-token",
                        "Duplicate fencing token"),
                new Expected("forged", 403, "https://fencing.dev/problems/forged-token", "Forged fencing token"),
                new Expected("missing", 428, "https://fencing.dev/problems/missing-token", "Missing fencing token"),
                new Expected("set-aside", 409, "https://fencing.dev/problems/remote-token-set-aside",
                        "Fencing token sent to a method that acquires its own lock"),
                new Expected("invalid-key", 400, "https://fencing.dev/problems/invalid-key", "Invalid fencing key"),
                new Expected("store", 503, "https://fencing.dev/problems/store-unavailable", "Fence store unavailable"),
                new Expected("lock", 503, "https://fencing.dev/problems/lock-not-acquired", "Lock not acquired"),
                new Expected("lock-broken", 500, "https://fencing.dev/problems/lock-service-broken",
                        "Lock service broken"),
                new Expected("busy", 503, "https://fencing.dev/problems/fence-busy", "Fence busy"))) {
            Answer answer = Answer.get(plain, "/internal/fail/" + expected.kind());

            assertThat(answer.status()).as(expected.kind()).isEqualTo(expected.status());
            assertThat(answer.problem().get("type")).as(expected.kind()).isEqualTo(expected.type());
            assertThat(answer.problem()).as(expected.kind())
                    .containsEntry("title", expected.title());
            boolean retry = List.of("lock", "busy").contains(expected.kind());
            assertThat(answer.headers().getFirst("Retry-After")).as(expected.kind()).isEqualTo(retry ? "1" : null);
        }
        assertThat(Answer.get(plain, "/internal/fail/store").body()).doesNotContain("secret_table");
        assertThat(Answer.get(plain, "/internal/fail/lock").body()).doesNotContain("10.0.0.7");
        assertThat(Answer.get(plain, "/internal/fail/lock-broken").body()).doesNotContain("secret_lease");
        assertThat(Answer.get(plain, "/internal/fail/busy").problem()).containsEntry("reason", "busy")
                .containsEntry("presented", "accounts:1#34@client-7");
        // no token filter covers /public: the token was the service's own lock's, left out as a 409 leaves it out
        assertThat(Answer.get(plain, "/public/fail/busy").problem()).containsEntry("reason", "busy")
                .containsEntry("resource", "accounts:1").doesNotContainKey("presented");
    }

    @Test
    void otherErrorsAreNotAnsweredAsFencingProblems() {
        Answer answer = Answer.get(plain, "/internal/fail/other");

        assertThat(answer.status()).isEqualTo(500);
        assertThat(answer.body()).doesNotContain("fencing.dev");
    }

    @Test
    void aHeaderOnAPathOutsideTheFiltersPatternsIsRefusedNotIgnored() {
        Answer refused = Answer.get(plain, "/public/fail/missing", "accounts:1#34@client-7");
        Answer missing = Answer.get(plain, "/public/fail/missing");

        assertThat(refused.status()).isEqualTo(403);
        assertThat(refused.problem()).containsEntry("type", FencingProblems.UNTRUSTED_TOKEN_TYPE);
        // no header on a path whose callers may not send one: the token was the service's own to bind
        assertThat(missing.status()).isEqualTo(500);
        assertThat(missing.problem()).containsEntry("type", FencingProblems.LOST_TOKEN_TYPE.toString());
        assertThat((String) missing.problem().get("detail")).doesNotContain("header was not read")
                .doesNotContain("FencingContext.bind");
    }

    @Test
    void withoutAnyFencingFilterAMissingTokenSaysTheHeaderWasNotReadOrThatTheServiceLostIt() {
        RouterFunction<ServerResponse> routes = RouterFunctions.route()
                .GET("/pay", request -> Mono.error(new MissingTokenException("accounts:1", "Ledger.pay"))).build();
        try (LoopbackServer bare = new LoopbackServer(WebHttpHandlerBuilder
                .webHandler(RouterFunctions.toWebHandler(routes))
                .exceptionHandler(new FencingWebExceptionHandler()).build())) {
            Answer ignored = Answer.get(bare.client(), "/pay", "accounts:1#34@client-7");
            Answer without = Answer.get(bare.client(), "/pay");

            assertThat(ignored.status()).isEqualTo(500);
            assertThat((String) ignored.problem().get("detail")).contains("header was not read: no "
                    + "FencingTokenWebFilter is registered").doesNotContain("Ledger.pay");
            // no header and no filter: the token was the service's own to bind, and it lost it
            assertThat(without.status()).isEqualTo(500);
            assertThat(without.problem()).containsEntry("type", FencingProblems.LOST_TOKEN_TYPE.toString())
                    .containsEntry("resource", "accounts:1");
            assertThat((String) without.problem().get("detail")).contains("accounts:1")
                    .doesNotContain("Ledger.pay").doesNotContain("header was not read");
        }
    }

    @Test
    void withTheFilterOnInternalPathsAPublicPathsMissingTokenIsTheServicesOwn() {
        RouterFunction<ServerResponse> routes = RouterFunctions.route()
                .GET("/pay", request -> Mono.error(new MissingTokenException("accounts:1", "Ledger.pay(long)")))
                .GET("/internal/pay", request ->
                        Mono.error(new MissingTokenException("accounts:1", "Ledger.pay(long)")))
                .GET("/stale", request -> Mono.error(new dev.fencing.rule.StaleTokenException("accounts:1",
                        new dev.fencing.token.FencingToken("accounts:1", 3, "host-7/lease-42"), 9, "Ledger.pay(long)")))
                .GET("/internal/stale", request -> Mono.error(new dev.fencing.rule.StaleTokenException("accounts:1",
                        new dev.fencing.token.FencingToken("accounts:1", 3, "host-7/lease-42"), 9, "Ledger.pay(long)")))
                .build();
        try (LoopbackServer server = new LoopbackServer(WebHttpHandlerBuilder
                .webHandler(RouterFunctions.toWebHandler(routes))
                .filter(FencingTokenWebFilter.forPaths("/internal/**"))   // as the Boot starter registers it
                .exceptionHandler(new FencingWebExceptionHandler()).build())) {
            Answer lost = Answer.get(server.client(), "/pay");
            assertThat(lost.status()).isEqualTo(500);
            assertThat(lost.problem()).containsEntry("type", FencingProblems.LOST_TOKEN_TYPE.toString());
            assertThat((String) lost.problem().get("detail")).doesNotContain("Ledger.pay");

            Answer missing = Answer.get(server.client(), "/internal/pay"); // the caller's token: 428
            assertThat(missing.status()).isEqualTo(428);
            assertThat(missing.problem()).containsEntry("type", FencingProblems.MISSING_TOKEN_TYPE.toString());
            assertThat((String) missing.problem().get("detail"))
                    .contains("contextWrite(ReactiveFencing.bind(token))", "FencingTokenWebFilter")
                    .doesNotContain("FencingContext.bind");

            // the service's own stale token on a public path: neither method nor holder; the caller's: all of it
            Answer own = Answer.get(server.client(), "/stale");
            assertThat(own.status()).isEqualTo(409);
            assertThat(own.problem()).doesNotContainKey("presented").containsEntry("verdict", "stale");
            assertThat((String) own.problem().get("detail")).doesNotContain("Ledger.pay").doesNotContain("host-7");
            Answer callers = Answer.get(server.client(), "/internal/stale");
            assertThat(callers.status()).isEqualTo(409);
            assertThat(callers.problem()).containsEntry("presented", "accounts:1#3@host-7/lease-42");
        }
    }

    @Test
    void theTokenBoundInTheClientsContextArrivesInTheHandlersContext() {
        String echoed = fencing.get().uri("/internal/echo").retrieve().bodyToMono(String.class)
                .contextWrite(ReactiveFencing.bind(PRESENTED))
                .block(Duration.ofSeconds(20));

        assertThat(echoed).isEqualTo("[accounts:1#34@client-7 remote]");
        assertThat(fencing.get().uri("/internal/echo").retrieve().bodyToMono(String.class)
                .block(Duration.ofSeconds(20))).isEqualTo("[]");
    }

    @Test
    void aRefusalOnTheServerComesBackToTheClientAsTheLibrarysException() {
        FencingToken old = new FencingToken("accounts:1", 12, "client-9");

        StepVerifier.create(fencing.get().uri("/internal/fail/stale").retrieve().bodyToMono(String.class)
                        .contextWrite(ReactiveFencing.bind(old)))
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOfSatisfying(StaleTokenException.class,
                        e -> {
                            assertThat(e.presented()).isEqualTo(old);
                            assertThat(e.maxSeen()).isEqualTo(40);
                            assertThat(e.operation()).isEqualTo("GET " + server.baseUrl()
                                    + "/internal/fail/stale (remote)");
                        }))
                .verify(Duration.ofSeconds(20));
    }
}
