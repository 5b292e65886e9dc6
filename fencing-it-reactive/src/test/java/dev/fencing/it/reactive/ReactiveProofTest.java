package dev.fencing.it.reactive;

import dev.fencing.context.MissingTokenException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.it.reactive.app.AccountService;
import dev.fencing.it.reactive.app.Deposit;
import dev.fencing.it.reactive.app.ProofController;
import dev.fencing.it.reactive.app.ReactiveProofApplication;
import dev.fencing.r2dbc.R2dbcFenceStore;
import dev.fencing.reactive.ReactiveFenceStore;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingExceptionAdvice;
import dev.fencing.web.FencingHeader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter in a real reactive Spring Boot application ({@link ReactiveProofApplication}) on the real PostgreSQL,
 * configured by properties only: fencing-r2dbc's store on Boot's R2DBC {@code ConnectionFactory}, the WebFlux
 * {@code Fencing-Token} filter on {@code /internal/**} and the WebFlux problem details, Reactor Netty serving real
 * HTTP. BlockHound is installed in this JVM before the application starts ({@link EventLoopWatch}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReactiveProofTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private ProofDatabase database;
    private ConfigurableApplicationContext context;
    private WebTestClient http;
    private AccountService accounts;
    private InMemoryTokenIssuer issuer;

    /** The in-process issuer of the acquiring methods (the starter adapts it to the reactive guard). */
    @Configuration(proxyBeanMethods = false)
    static class InProcessIssuer {
        @Bean
        InMemoryTokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }
    }

    @BeforeAll
    void start() {
        EventLoopWatch.install();
        database = new ProofDatabase();
        database.create(10);
        context = new SpringApplicationBuilder(ReactiveProofApplication.class, InProcessIssuer.class)
                .properties(Map.of(
                        "server.port", "0",
                        "spring.r2dbc.url", ProofDatabase.URL,
                        "spring.r2dbc.username", ProofDatabase.USER,
                        "spring.r2dbc.pool.initial-size", "2",
                        "spring.r2dbc.pool.max-size", "8",
                        "fencing.store.r2dbc.table", database.fence,
                        "fencing.web.reactive.path-patterns", "/internal/**",
                        "proof.tables.accounts", database.accounts,
                        "proof.tables.applied", database.applied))
                .run();
        int port = ((WebServerApplicationContext) context).getWebServer().getPort();
        http = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).responseTimeout(TIMEOUT).build();
        accounts = context.getBean(AccountService.class);
        issuer = context.getBean(InMemoryTokenIssuer.class);
    }

    @AfterAll
    void stop() {
        try {
            if (context != null) {
                context.close();
            }
        } finally {
            if (database != null) {
                database.drop();
            }
        }
    }

    private static FencingToken token(long account, long value, String holder) {
        return new FencingToken("account:" + account, value, holder);
    }

    @Test
    void theStarterConfiguresTheR2dbcStoreFromProperties() {
        assertThat(context.getBean(ReactiveFenceStore.class)).isInstanceOf(R2dbcFenceStore.class);
        assertThat(context.getBeansOfType(TokenIssuer.class)).containsOnlyKeys("tokenIssuer");
    }

    /**
     * A zombie: the holder of token 19 lost its lock while paused, token 20 wrote since; its late request over HTTP
     * is refused with the stale-token problem, and neither the account nor max_seen changes.
     */
    @Test
    void aZombieRequestWithAStaleHeaderIsRefusedWith409AndChangesNothing() {
        http.post().uri("/internal/accounts/1/deposit/10")
                .header(FencingHeader.NAME, FencingHeader.format(List.of(token(1, 20, "new-holder"))))
                .exchange()
                .expectStatus().isOk()
                .expectBody(Deposit.class).isEqualTo(new Deposit(10, 20));
        assertThat(database.balance(1)).isEqualTo(10);
        assertThat(database.maxSeen("account:1")).hasValue(20);

        http.post().uri("/internal/accounts/1/deposit/1000")
                .header(FencingHeader.NAME, FencingHeader.format(List.of(token(1, 19, "zombie"))))
                .exchange()
                .expectStatus().isEqualTo(409)
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type").isEqualTo(FencingExceptionAdvice.STALE_TOKEN_TYPE.toString())
                .jsonPath("$.status").isEqualTo(409)
                .jsonPath("$.resource").isEqualTo("account:1")
                .jsonPath("$.verdict").isEqualTo("stale")
                .jsonPath("$.maxSeen").isEqualTo(20);

        assertThat(database.balance(1)).as("the zombie's deposit was not written").isEqualTo(10);
        assertThat(database.maxSeen("account:1")).as("max_seen unchanged").hasValue(20);
        assertThat(database.appliedTokens(1)).containsExactly(20L);
    }

    /**
     * Many tokens, shuffled, subscribed concurrently on one resource, each in its own reactive transaction: the writes
     * the database applied are in token order, and every refused token was stale when it was checked (the ordering
     * check of the blocking store contract).
     */
    @Test
    void concurrentSubscriptionsOnOneResourceApplyInTokenOrder() {
        long account = 2;
        int tokens = 120;
        List<Long> values = new ArrayList<>(LongStream.rangeClosed(1, tokens).boxed().toList());
        Collections.shuffle(values);
        AtomicInteger accepted = new AtomicInteger();
        List<String> notStale = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger rejected = new AtomicInteger();

        Flux.fromIterable(values)
                .flatMap(value -> accounts.deposit(account, 1)
                        .contextWrite(ReactiveFencing.bind(token(account, value, "h" + value)))
                        .doOnNext(deposit -> accepted.incrementAndGet())
                        .onErrorResume(TokenRejectedException.class, e -> {
                            if (e.maxSeen() <= value) {
                                notStale.add(value + " refused with max_seen " + e.maxSeen());
                            }
                            rejected.incrementAndGet();
                            return Mono.empty();
                        }), 12)
                .then().block(TIMEOUT);

        List<Long> applied = database.appliedTokens(account);
        assertThat(notStale).as("refused tokens that were not stale").isEmpty();
        assertThat(applied).isNotEmpty().isSorted().doesNotHaveDuplicates().hasSize(accepted.get());
        assertThat(applied.size() + rejected.get()).isEqualTo(tokens);
        assertThat(applied.get(applied.size() - 1)).isEqualTo(tokens);
        assertThat(database.maxSeen("account:" + account)).hasValue(tokens);
        assertThat(database.balance(account)).isEqualTo(applied.size());
    }

    @Test
    void theFencedServiceSignalsTheValueThenCompletesOrAnError() {
        long account = 3;
        Mono<Deposit> assembled = accounts.deposit(account, 5)
                .contextWrite(ReactiveFencing.bind(token(account, 7, "a")));
        assertThat(database.appliedTokens(account)).as("nothing runs before subscription").isEmpty();

        StepVerifier.create(assembled)
                .expectNext(new Deposit(5, 7))
                .expectComplete()
                .verify(TIMEOUT);
        StepVerifier.create(accounts.deposit(account, 5).contextWrite(ReactiveFencing.bind(token(account, 6, "b"))))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(StaleTokenException.class,
                        stale -> assertThat(stale.maxSeen()).isEqualTo(7)))
                .verify(TIMEOUT);
        StepVerifier.create(accounts.deposit(account, 5))
                .expectError(MissingTokenException.class)
                .verify(TIMEOUT);

        assertThat(database.balance(account)).isEqualTo(5);
        assertThat(database.appliedTokens(account)).containsExactly(7L);
    }

    @Test
    void anAcquiringMethodReleasesTheLockOnComplete() {
        long account = 4;
        StepVerifier.create(accounts.depositAcquiring(account, 3))
                .assertNext(deposit -> {
                    assertThat(deposit.balance()).isEqualTo(3);
                    assertThat(deposit.token()).isEqualTo(issuer.highestIssued("account:" + account));
                })
                .expectComplete()
                .verify(TIMEOUT);
        assertThat(issuer.isHeld("account:" + account)).as("released before the completion was signalled").isFalse();
        assertThat(database.maxSeen("account:" + account)).hasValue(issuer.highestIssued("account:" + account));
    }

    @Test
    void anAcquiringMethodReleasesTheLockOnErrorAndItsTransactionRollsBack() {
        long account = 5;
        StepVerifier.create(accounts.depositAcquiringThenFail(account, 3))
                .expectError(AccountService.DepositFailed.class)
                .verify(TIMEOUT);
        assertThat(issuer.isHeld("account:" + account)).as("released before the error was signalled").isFalse();
        assertThat(issuer.highestIssued("account:" + account)).as("a token was taken").isPositive();
        assertThat(database.balance(account)).as("the write rolled back").isZero();
        assertThat(database.maxSeen("account:" + account)).as("max_seen rolled back with it").isEmpty();
    }

    @Test
    void anAcquiringMethodReleasesTheLockWhenItsSubscriptionIsCancelled() {
        long account = 6;
        String resource = "account:" + account;
        Disposable subscription = accounts.holdLock(account).subscribe();
        try {
            await(() -> issuer.isHeld(resource), "the lock is taken on subscription");
        } finally {
            subscription.dispose();
        }
        await(() -> !issuer.isHeld(resource), "the lock is released on cancel");
    }

    /**
     * With BlockHound watching every non-blocking thread, a fenced request (the WebFlux filter, the reactive guard,
     * the R2DBC check and write in a reactive transaction, the response) is served on Reactor Netty's event loop
     * without a single blocking call.
     */
    @Test
    void aFencedRequestOnTheEventLoopBlocksNothing() {
        EventLoopWatch.clear();
        context.getBean(ProofController.class).handlerThreads().clear();
        http.post().uri("/internal/accounts/7/deposit/4")
                .header(FencingHeader.NAME, FencingHeader.format(List.of(token(7, 3, "a"))))
                .exchange()
                .expectStatus().isOk()
                .expectBody(Deposit.class).isEqualTo(new Deposit(4, 3));
        http.post().uri("/internal/accounts/7/deposit/4")
                .header(FencingHeader.NAME, FencingHeader.format(List.of(token(7, 2, "zombie"))))
                .exchange()
                .expectStatus().isEqualTo(409);

        assertThat(context.getBean(ProofController.class).handlerThreads())
                .as("the handlers ran on Reactor Netty's event loop").hasSize(2)
                .allSatisfy(thread -> assertThat(thread).startsWith("reactor-http-"));
        assertThat(EventLoopWatch.blockingCalls()).isEmpty();
    }

    /** The control: a deliberate sleep on the event loop is caught, so BlockHound is really watching. */
    @Test
    void aBlockingCallOnTheEventLoopIsCaught() {
        EventLoopWatch.clear();
        http.get().uri("/blocking").exchange().expectStatus().is5xxServerError();
        assertThat(EventLoopWatch.blockingCalls())
                .anySatisfy(call -> assertThat(call).contains("java.lang.Thread.sleep").contains("reactor-http-"));
    }

    private static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 10 seconds: " + what);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting until " + what, e);
            }
        }
    }
}
