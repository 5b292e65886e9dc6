package dev.fencing.it.boot;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.it.boot.app.AccountService;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.RestClient;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static dev.fencing.it.boot.ProofApp.APPLICATION_TAG;
import static dev.fencing.it.boot.ProofApp.getJson;
import static dev.fencing.it.boot.ProofApp.list;
import static dev.fencing.it.boot.ProofApp.map;
import static dev.fencing.it.boot.ProofApp.sample;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two instances of {@link dev.fencing.it.boot.app.ProofApplication} on one database, in two JVMs: instance A (this
 * JVM) takes the {@code accounts} lock from the JDBC issuer and writes, then pauses past its lease
 * ({@code fencing.issuer.jdbc.lease-time=2s}); instance B (a child process) takes the lock with a higher token and
 * writes; A wakes and sends its write to B over HTTP with its token in the {@code Fencing-Token} header (Boot's
 * {@code RestClient.Builder}, {@code fencing.web.client.propagate-to}). B refuses it with 409, counts it as stale and
 * lists it; max_seen and the data stay B's.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractTwoProcessesProofTest {

    private ProofDatabase database;
    private ProofProcess instanceB;
    private ConfigurableApplicationContext instanceA;

    abstract ProofDatabase database();

    @BeforeAll
    void start() throws Exception {
        database = database();
        database.create();
        // A first: its Flyway migrates the database B then finds ready
        instanceA = ProofApp.start(database);
        instanceB = ProofProcess.start(getClass().getSimpleName() + "-B-" + database.name,
                ProofApp.properties(database));
    }

    @AfterAll
    void stop() throws Exception {
        try {
            if (instanceB != null) {
                instanceB.close();
                assertThat(instanceB.isAlive()).isFalse();
            }
        } finally {
            try {
                if (instanceA != null) {
                    instanceA.close();
                }
            } finally {
                if (database != null) {
                    database.drop();
                }
            }
        }
    }

    @Test
    void aPausedHoldersTokenIsRefusedWith409ByTheOtherInstanceAndCountedOnBothSides() throws Exception {
        TokenIssuer issuerA = instanceA.getBean(TokenIssuer.class);
        AccountService accountsA = instanceA.getBean(AccountService.class);
        RestClient fromAToB = instanceA.getBean(RestClient.Builder.class)
                .baseUrl("http://127.0.0.1:" + instanceB.port()).build();
        RestClient httpB = ProofApp.http(instanceB.port());
        String tag = "application=\"" + APPLICATION_TAG + "\"";

        Lease lease = issuerA.acquire("accounts", Duration.ofSeconds(10));
        FencingToken tokenA = lease.token();
        try (FencingScope ignored = FencingContext.bind(tokenA)) {
            // A holds the lock and writes
            assertThat(accountsA.deposit(1, 10).token()).isEqualTo(tokenA.value());
            assertThat(database.maxSeen("accounts")).hasValue(tokenA.value());

            // A pauses longer than its lease
            Thread.sleep(2_500);

            // B takes the lock over (a higher token) and writes
            AccountService.Deposit writtenByB = httpB.post().uri("/accounts/1/deposit/5").retrieve()
                    .body(AccountService.Deposit.class);
            assertThat(writtenByB).isNotNull();
            long tokenB = writtenByB.token();
            assertThat(tokenB).isGreaterThan(tokenA.value());
            assertThat(writtenByB.balance()).isEqualTo(15);
            assertThat(database.maxSeen("accounts")).hasValue(tokenB);
            String scrapeBefore = httpB.get().uri("/actuator/prometheus").retrieve().body(String.class);
            double staleBefore = sample(scrapeBefore, "fencing_checks_total", tag, "resource=\"accounts\"",
                    "outcome=\"stale\"");

            // A wakes and sends its write to B: Boot's RestClient in A carries the bound token to 127.0.0.1, and
            // maps B's 409 to the exception a local refusal throws, counted on A's side
            MeterRegistry registryA = instanceA.getBean(MeterRegistry.class);
            assertThat(registryA.find("fencing.remote.rejections").counters()).isEmpty();
            assertThatThrownBy(() -> fromAToB.post().uri("/internal/accounts/1/deposit/100").retrieve()
                    .toBodilessEntity())
                    .isInstanceOfSatisfying(StaleTokenException.class, stale -> {
                        assertThat(stale.resource()).isEqualTo("accounts");
                        assertThat(stale.presented()).isEqualTo(tokenA);
                        assertThat(stale.maxSeen()).isEqualTo(tokenB);
                        assertThat(stale.getMessage()).contains("127.0.0.1:" + instanceB.port());
                        // B's answer, kept as the cause: the problem detail as B sent it
                        assertThat(stale.getCause()).isInstanceOfSatisfying(HttpClientErrorException.Conflict.class,
                                conflict -> assertThat(conflict.getResponseBodyAsString())
                                        .contains("\"title\":\"Stale fencing token\"", "\"resource\":\"accounts\"",
                                                "\"verdict\":\"stale\"", "\"presented\":\"" + tokenA.toText() + "\"",
                                                "\"maxSeen\":" + tokenB));
                    });
            assertThat(registryA.get("fencing.remote.rejections").tag("resource", "accounts")
                    .tag("outcome", "stale").counter().count()).as("counted once on the caller's side").isEqualTo(1);

            // B, the server side: counted as stale (with the common tag), listed, nothing written
            String scrapeAfter = httpB.get().uri("/actuator/prometheus").retrieve().body(String.class);
            assertThat(sample(scrapeAfter, "fencing_checks_total", tag, "resource=\"accounts\"",
                    "outcome=\"stale\"")).isEqualTo(staleBefore + 1);
            Map<String, Object> fencingB = getJson(httpB, "/actuator/fencing");
            List<Map<String, Object>> rejections = list(fencingB.get("rejections"));
            assertThat(rejections).isNotEmpty();
            assertThat(rejections.get(0)).containsEntry("resource", "accounts").containsEntry("verdict", "stale");
            assertThat(((Number) rejections.get(0).get("presentedValue")).longValue()).isEqualTo(tokenA.value());
            assertThat(((Number) rejections.get(0).get("maxSeen")).longValue()).isEqualTo(tokenB);
            assertThat(map(map(fencingB.get("checks")).get("accounts"))).containsEntry("stale", 1);
            Map<String, Object> accountsOnB = getJson(httpB, "/actuator/fencing/accounts");
            assertThat(((Number) accountsOnB.get("maxSeen")).longValue()).isEqualTo(tokenB);
            assertThat(httpB.get().uri("/accounts/1").retrieve().body(Long.class)).isEqualTo(15);
            assertThat(database.maxSeen("accounts")).as("max_seen unchanged").hasValue(tokenB);
            assertThat(database.balance(1)).as("data unchanged").hasValue(15);

            // A's own write to the shared database with the same token is refused as well
            assertThatThrownBy(() -> accountsA.deposit(1, 100)).isInstanceOf(StaleTokenException.class);
            assertThat(database.balance(1)).hasValue(15);
            assertThat(database.maxSeen("accounts")).hasValue(tokenB);
        } finally {
            lease.close(); // quiet: the lease was lost, B holds the lock
        }
        assertThat(instanceB.isAlive()).isTrue();
    }
}
