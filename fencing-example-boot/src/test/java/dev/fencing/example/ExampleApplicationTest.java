package dev.fencing.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.issuer.Lease;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The example application as it ships (its application.yml, its Flyway migration), started on a random port against
 * the PostgreSQL at 127.0.0.1:5432 (database {@code test}, user {@code postgres}), in a schema of its own that is
 * dropped afterwards: parallel builds share that database. Everything is driven over real HTTP.
 */
class ExampleApplicationTest {

    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";
    private static final String SCHEMA = "example_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12)
            .toLowerCase(Locale.ROOT);
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static ConfigurableApplicationContext context;
    /** What the application printed while it started (Boot logs to the console). */
    private static String startupOutput;
    private static String base;
    private static JdbcTemplate jdbc;

    @BeforeAll
    static void start() {
        PrintStream console = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        // logback's console appender writes to whatever System.out is at each line
        System.setOut(new PrintStream(new TeeOutputStream(console, printed), true, StandardCharsets.UTF_8));
        try {
            // arguments, not builder properties: those are defaults, and application.yml would win over them
            context = new SpringApplicationBuilder(ExampleApplication.class).run(
                    "--server.port=0",
                    "--spring.main.banner-mode=off",
                    "--spring.datasource.url=" + URL + "?currentSchema=" + SCHEMA,
                    // Flyway creates the schema, keeps its history there and migrates into it
                    "--spring.flyway.schemas=" + SCHEMA,
                    "--spring.flyway.default-schema=" + SCHEMA);
        } finally {
            System.setOut(console);
            startupOutput = printed.toString(StandardCharsets.UTF_8);
        }
        base = "http://127.0.0.1:" + ((WebServerApplicationContext) context).getWebServer().getPort();
        jdbc = context.getBean(JdbcTemplate.class);
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

    /**
     * The repository's one unfenced write ({@code save}, inserts only) is listed in fencing.allowed-unfenced-writes,
     * so the example starts without the startup warning of unfenced repository writes (which the check does print:
     * the starter logs at INFO and above here).
     */
    @Test
    void theExampleStartsWithoutAWarningOfUnfencedRepositoryWrites() {
        assertThat(startupOutput).contains("Tomcat started on port")
                .doesNotContain("UnfencedRepositoryWrites", "not its write methods");
    }

    @Test
    void aTransferOverHttpMovesTheMoneyAndAdvancesTheFenceOfBothAccounts() throws Exception {
        long alice = createAccount("alice", 10_000);
        long bob = createAccount("bob", 500);

        HttpResponse<String> response = post("/transfers", transfer(alice, bob, 2_500));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        JsonNode transfer = JSON.readTree(response.body());
        assertThat(transfer.get("fromBalance").asLong()).isEqualTo(7_500);
        assertThat(transfer.get("toBalance").asLong()).isEqualTo(3_000);
        assertThat(balance(alice)).isEqualTo(7_500);
        assertThat(balance(bob)).isEqualTo(3_000);
        long aliceFence = maxSeen(alice);
        long bobFence = maxSeen(bob);
        assertThat(aliceFence).as("accounts:" + alice + " checked a token").isPositive();
        assertThat(bobFence).as("accounts:" + bob + " checked a token").isPositive();

        // the next transfer takes newer tokens, and both fences move past the old ones
        assertThat(post("/transfers", transfer(bob, alice, 1_000)).statusCode()).isEqualTo(200);
        assertThat(maxSeen(alice)).isGreaterThan(aliceFence);
        assertThat(maxSeen(bob)).isGreaterThan(bobFence);
        assertThat(balance(alice) + balance(bob)).isEqualTo(10_500);
    }

    @Test
    void oppositeConcurrentTransfersAllCompleteAndConserveTheTotal() throws Exception {
        long a = createAccount("a", 100_000);
        long b = createAccount("b", 100_000);
        int each = 20;
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<HttpResponse<String>>> results = new ArrayList<>();
            for (int i = 0; i < each; i++) {
                results.add(pool.submit(() -> post("/transfers", transfer(a, b, 100))));
                results.add(pool.submit(() -> post("/transfers", transfer(b, a, 30))));
            }
            for (Future<HttpResponse<String>> result : results) {
                HttpResponse<String> response = result.get(60, TimeUnit.SECONDS);
                assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(balance(a)).isEqualTo(100_000 - each * 100 + each * 30);
        assertThat(balance(b)).isEqualTo(100_000 + each * 100 - each * 30);
        assertThat(balance(a) + balance(b)).isEqualTo(200_000);
    }

    @Test
    void aZombieWithAStaleTokenIsRefusedWith409AndTheBalanceIsUnchanged() throws Exception {
        long account = createAccount("carol", 1_000);
        long other = createAccount("dave", 1_000);
        TokenIssuer issuer = context.getBean(TokenIssuer.class);

        // the zombie held the lock once; its lease is gone (released here, expired in real life)
        FencingToken zombie;
        try (Lease lease = issuer.acquire("accounts:" + account, Duration.ofSeconds(10))) {
            zombie = lease.token();
        }
        // meanwhile a newer holder writes the account
        assertThat(post("/transfers", transfer(other, account, 100)).statusCode()).isEqualTo(200);
        assertThat(balance(account)).isEqualTo(1_100);

        // the zombie wakes up and writes through the internal endpoint, with its token in the header
        HttpResponse<String> stale = post("/internal/accounts/" + account + "/deposits", "{\"amount\":5000}",
                FencingHeader.format(List.of(zombie)));
        assertThat(stale.statusCode()).as(stale.body()).isEqualTo(409);
        assertThat(stale.headers().firstValue("Content-Type")).hasValueSatisfying(
                type -> assertThat(type).startsWith("application/problem+json"));
        JsonNode problem = JSON.readTree(stale.body());
        assertThat(problem.get("title").asString()).isEqualTo("Stale fencing token");
        assertThat(problem.get("resource").asString()).isEqualTo("accounts:" + account);
        assertThat(problem.get("presented").asString()).isEqualTo(zombie.toString());
        assertThat(balance(account)).isEqualTo(1_100);

        // no token at all: 428, nothing written
        HttpResponse<String> missing = post("/internal/accounts/" + account + "/deposits", "{\"amount\":5000}");
        assertThat(missing.statusCode()).as(missing.body()).isEqualTo(428);

        // the current holder's token is accepted on the same path
        try (Lease lease = issuer.acquire("accounts:" + account, Duration.ofSeconds(10))) {
            HttpResponse<String> fresh = post("/internal/accounts/" + account + "/deposits", "{\"amount\":5}",
                    FencingHeader.format(List.of(lease.token())));
            assertThat(fresh.statusCode()).as(fresh.body()).isEqualTo(200);
        }
        assertThat(balance(account)).isEqualTo(1_105);

        // the public endpoints do not take the header (the filter is mapped to /internal/* only): sent there, it is
        // refused with 403 before the handler, not set aside while the transfer takes a lock of its own and writes
        HttpResponse<String> unread = post("/transfers", transfer(account, other, 5),
                FencingHeader.format(List.of(zombie)));
        assertThat(unread.statusCode()).as(unread.body()).isEqualTo(403);
        assertThat(JSON.readTree(unread.body()).get("title").asString()).isEqualTo("Untrusted fencing token");
        assertThat(balance(account)).isEqualTo(1_105);
        assertThat(post("/transfers", transfer(account, other, 5)).statusCode()).isEqualTo(200);
        assertThat(balance(account)).isEqualTo(1_100);
    }

    @Test
    void aTransferWhoseSecondTokenIsStaleWritesNeitherAccount() throws Exception {
        long from = createAccount("ivan", 1_000);
        long to = createAccount("judy", 1_000);
        TokenIssuer issuer = context.getBean(TokenIssuer.class);
        FencingToken staleTo;
        try (Lease lease = issuer.acquire("accounts:" + to, Duration.ofSeconds(10))) {
            staleTo = lease.token();
        }
        assertThat(post("/transfers", transfer(to, from, 1)).statusCode()).isEqualTo(200);  // newer tokens, both

        // a current token for the account it withdraws from, a stale one for the account it deposits to: the
        // withdrawal passes its check and runs, the deposit's check refuses, and the transaction takes both back
        Ledger ledger = context.getBean(Ledger.class);
        try (Lease fresh = issuer.acquire("accounts:" + from, Duration.ofSeconds(10));
             FencingScope scope = FencingContext.bind(fresh.token(), staleTo)) {
            assertThatThrownBy(() -> ledger.move(from, to, 500)).isInstanceOf(StaleTokenException.class);
        }
        assertThat(balance(from)).isEqualTo(1_001);
        assertThat(balance(to)).isEqualTo(999);
    }

    @Test
    void applicationErrorsAreProblemDetailsAndWriteNothing() throws Exception {
        long poor = createAccount("erin", 100);
        long rich = createAccount("frank", 100);

        HttpResponse<String> tooMuch = post("/transfers", transfer(poor, rich, 1_000));
        assertThat(tooMuch.statusCode()).as(tooMuch.body()).isEqualTo(422);
        assertThat(JSON.readTree(tooMuch.body()).get("title").asString()).isEqualTo("Insufficient funds");
        assertThat(balance(poor)).isEqualTo(100);
        assertThat(balance(rich)).isEqualTo(100);

        HttpResponse<String> unknown = post("/transfers", transfer(poor, 987_654_321L, 10));
        assertThat(unknown.statusCode()).as(unknown.body()).isEqualTo(404);
        assertThat(get("/accounts/987654321").statusCode()).isEqualTo(404);
        assertThat(post("/transfers", transfer(poor, poor, 10)).statusCode()).isEqualTo(400);
        assertThat(balance(poor)).isEqualTo(100);
    }

    @Test
    void healthShowsTheFencingComponentUp() throws Exception {
        HttpResponse<String> response = get("/actuator/health");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        JsonNode health = JSON.readTree(response.body());
        assertThat(health.get("status").asString()).isEqualTo("UP");
        assertThat(health.at("/components/fencing/status").asString()).isEqualTo("UP");
    }

    @Test
    void theFencingEndpointShowsTheConfigurationAndTheCounts() throws Exception {
        long a = createAccount("gina", 1_000);
        long b = createAccount("hal", 1_000);
        assertThat(post("/transfers", transfer(a, b, 1)).statusCode()).isEqualTo(200);

        HttpResponse<String> response = get("/actuator/fencing");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        JsonNode fencing = JSON.readTree(response.body());
        assertThat(fencing.at("/store/type").asString()).isEqualTo("JdbcFenceStore");
        assertThat(fencing.at("/issuer/type").asString()).isEqualTo("JdbcTokenIssuer");
        assertThat(fencing.at("/checks/accounts/accepted").asLong()).isGreaterThanOrEqualTo(2);
        assertThat(fencing.at("/acquisitions/accounts").isMissingNode()).isFalse();

        // one account's committed max_seen
        HttpResponse<String> one = get("/actuator/fencing/accounts:" + a);
        assertThat(one.statusCode()).as(one.body()).isEqualTo(200);
        assertThat(JSON.readTree(one.body()).get("maxSeen").asLong()).isEqualTo(maxSeen(a));

        assertThat(get("/actuator/prometheus").body()).contains("fencing_checks_total");
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

    private static long maxSeen(long account) {
        Long value = jdbc.query("SELECT max_seen FROM fencing_max_seen WHERE resource = ?",
                rs -> rs.next() ? rs.getLong(1) : null, "accounts:" + account);
        return value == null ? 0 : value;
    }

    private static String transfer(long from, long to, long amount) {
        return "{\"from\":" + from + ",\"to\":" + to + ",\"amount\":" + amount + "}";
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30)).GET()
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> post(String path, String json) throws Exception {
        return post(path, json, null);
    }

    private static HttpResponse<String> post(String path, String json, String fencingHeader) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        if (fencingHeader != null) {
            request.header(FencingHeader.NAME, fencingHeader);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Writes to both streams. */
    private static final class TeeOutputStream extends OutputStream {
        private final OutputStream first;
        private final OutputStream second;

        TeeOutputStream(OutputStream first, OutputStream second) {
            this.first = first;
            this.second = second;
        }

        @Override
        public void write(int b) throws IOException {
            first.write(b);
            second.write(b);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            first.write(bytes, offset, length);
            second.write(bytes, offset, length);
        }

        @Override
        public void flush() throws IOException {
            first.flush();
            second.flush();
        }
    }
}
