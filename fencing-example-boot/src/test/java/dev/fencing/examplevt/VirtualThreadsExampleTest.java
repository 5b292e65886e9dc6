package dev.fencing.examplevt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingPropagation;
import dev.fencing.context.FencingScope;
import dev.fencing.context.MissingTokenException;
import dev.fencing.example.ExampleApplication;
import dev.fencing.example.Ledger;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.json.JsonMapper;

/**
 * The example application with {@code spring.threads.virtual.enabled=true} (Java 21 and later; skipped on 17), on the
 * PostgreSQL at 127.0.0.1:5432 in a schema of its own: requests run on virtual threads, concurrent transfers over
 * HTTP all complete and conserve the total, each fenced write counted once; an {@code @Async} write (Boot's executor,
 * a {@code SimpleAsyncTaskExecutor} on virtual threads) checks its caller's token, a zombie's is refused; a task on
 * an executor of the application's own ({@code newVirtualThreadPerTaskExecutor}) is refused as missing unless
 * wrapped, as docs/propagation.md says.
 */
@Timeout(120)
class VirtualThreadsExampleTest {

    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";
    private static final String SCHEMA = "vthreads_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12)
            .toLowerCase(Locale.ROOT);
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static ConfigurableApplicationContext context;
    private static String base;

    /** What this test adds: an {@code @Async} deposit and an endpoint that tells whether requests run virtual. */
    @Configuration(proxyBeanMethods = false)
    @EnableAsync
    static class VirtualThreadsConfig {
        @Bean
        AsyncDeposits asyncDeposits(Ledger ledger) {
            return new AsyncDeposits(ledger);
        }

        @Bean
        ThreadController threadController() {
            return new ThreadController();
        }
    }

    /** Deposits on Boot's {@code @Async} executor; answers whether it ran on a virtual thread. */
    static class AsyncDeposits {
        private final Ledger ledger;

        AsyncDeposits(Ledger ledger) {
            this.ledger = ledger;
        }

        @Async
        public CompletableFuture<Boolean> deposit(long id, long amount) {
            ledger.deposit(id, amount);
            return CompletableFuture.completedFuture(isVirtual(Thread.currentThread()));
        }
    }

    @RestController
    static class ThreadController {
        @GetMapping("/vt/virtual")
        public String virtual() {
            return String.valueOf(isVirtual(Thread.currentThread()));
        }
    }

    /** {@code Thread.isVirtual()} of Java 21, which this module (compiled for 17) cannot name. */
    static boolean isVirtual(Thread thread) {
        try {
            return (Boolean) Thread.class.getMethod("isVirtual").invoke(thread);
        } catch (ReflectiveOperationException e) {
            return false;
        }
    }

    @BeforeAll
    static void start() {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need Java 21");
        context = new SpringApplicationBuilder(ExampleApplication.class, VirtualThreadsConfig.class).run(
                "--server.port=0",
                "--spring.main.banner-mode=off",
                "--spring.threads.virtual.enabled=true",
                "--spring.datasource.url=" + URL + "?currentSchema=" + SCHEMA,
                "--spring.flyway.schemas=" + SCHEMA,
                "--spring.flyway.default-schema=" + SCHEMA);
        base = "http://127.0.0.1:" + ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (context != null) {
                context.close();
            }
        } finally {
            try (Connection c = DriverManager.getConnection(URL, "postgres", null);
                 Statement s = c.createStatement()) {
                s.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
            }
        }
    }

    @Test
    void requestsRunOnVirtualThreads() throws Exception {
        HttpResponse<String> response = get("/vt/virtual");
        assertThat(response.body()).isEqualTo("true");
    }

    @Test
    void concurrentTransfersOnVirtualThreadsAllCompleteConserveTheTotalAndAreEachCheckedTwice() throws Exception {
        long a = createAccount("vt-a", 100_000);
        long b = createAccount("vt-b", 100_000);
        double acceptedBefore = checks("accepted");
        int each = 60;
        ExecutorService pool = Executors.newFixedThreadPool(40);
        try {
            List<Future<HttpResponse<String>>> results = new ArrayList<>();
            for (int i = 0; i < each; i++) {
                results.add(pool.submit(() -> post("/transfers", transfer(a, b, 100))));
                results.add(pool.submit(() -> post("/transfers", transfer(b, a, 30))));
            }
            for (Future<HttpResponse<String>> result : results) {
                HttpResponse<String> response = result.get(90, TimeUnit.SECONDS);
                assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(balance(a)).isEqualTo(100_000 - each * 100 + each * 30);
        assertThat(balance(a) + balance(b)).isEqualTo(200_000);
        assertThat(checks("accepted") - acceptedBefore).as("a withdrawal and a deposit checked per transfer")
                .isEqualTo(2.0 * 2 * each);
        assertThat(checks("stale") + checks("missing")).isZero();
    }

    @Test
    void anAsyncWriteOnAVirtualThreadChecksItsCallersTokenAndAZombiesIsRefused() throws Exception {
        long account = createAccount("vt-async", 1_000);
        long other = createAccount("vt-other", 1_000);
        TokenIssuer issuer = context.getBean(TokenIssuer.class);
        AsyncDeposits deposits = context.getBean(AsyncDeposits.class);
        try (Lease lease = issuer.acquire("accounts:" + account, Duration.ofSeconds(10));
             FencingScope ignored = FencingContext.bind(lease.token())) {
            assertThat(deposits.deposit(account, 10).get(30, TimeUnit.SECONDS)).as("ran on a virtual thread").isTrue();
        }
        assertThat(balance(account)).isEqualTo(1_010);

        FencingToken zombie;
        try (Lease lease = issuer.acquire("accounts:" + account, Duration.ofSeconds(10))) {
            zombie = lease.token();
        }
        assertThat(post("/transfers", transfer(other, account, 100)).statusCode()).isEqualTo(200); // a newer holder
        try (FencingScope ignored = FencingContext.bind(zombie)) {
            CompletableFuture<Boolean> stale = deposits.deposit(account, 5_000);
            assertThat(stale).failsWithin(Duration.ofSeconds(30)).withThrowableOfType(ExecutionException.class)
                    .havingCause().isInstanceOf(StaleTokenException.class);
        }
        assertThat(balance(account)).isEqualTo(1_110);
    }

    @Test
    void aTaskOnAnExecutorOfItsOwnIsRefusedAsMissingUnlessWrapped() throws Exception {
        long account = createAccount("vt-own", 1_000);
        TokenIssuer issuer = context.getBean(TokenIssuer.class);
        Ledger ledger = context.getBean(Ledger.class);
        ExecutorService virtual = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor")
                .invoke(null);
        try (Lease lease = issuer.acquire("accounts:" + account, Duration.ofSeconds(10));
             FencingScope ignored = FencingContext.bind(lease.token())) {
            Future<Object> bare = virtual.submit(() -> ledger.deposit(account, 1));
            assertThat(bare).failsWithin(Duration.ofSeconds(30)).withThrowableOfType(ExecutionException.class)
                    .havingCause().isInstanceOf(MissingTokenException.class);
            Future<Object> wrapped = FencingPropagation.executorService(virtual).submit(
                    () -> ledger.deposit(account, 2));
            wrapped.get(30, TimeUnit.SECONDS);
        } finally {
            virtual.shutdown();
            assertThat(virtual.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(balance(account)).isEqualTo(1_002);
    }

    private static double checks(String outcome) {
        return context.getBean(MeterRegistry.class).find("fencing.checks").tag("outcome", outcome).counters()
                .stream().mapToDouble(c -> c.count()).sum();
    }

    private static long createAccount(String owner, long balance) throws Exception {
        HttpResponse<String> response = post("/accounts", "{\"owner\":\"" + owner + "\",\"balance\":" + balance + "}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return JSON.readTree(response.body()).get("id").asLong();
    }

    private static long balance(long id) throws Exception {
        HttpResponse<String> response = get("/accounts/" + id);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return JSON.readTree(response.body()).get("balance").asLong();
    }

    private static String transfer(long from, long to, long amount) {
        return "{\"from\":" + from + ",\"to\":" + to + ",\"amount\":" + amount + "}";
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30)).GET()
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> post(String path, String json) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
