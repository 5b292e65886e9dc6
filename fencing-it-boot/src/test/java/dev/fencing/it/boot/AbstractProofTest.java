package dev.fencing.it.boot;

import dev.fencing.it.boot.app.AccountService;
import dev.fencing.it.boot.app.OrderService;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.store.FenceStore;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.web.client.RestClient;

import java.sql.SQLException;
import java.util.List;
import java.util.Map;

import static dev.fencing.it.boot.ProofApp.APPLICATION_TAG;
import static dev.fencing.it.boot.ProofApp.FENCE_TABLE;
import static dev.fencing.it.boot.ProofApp.LEASE_TABLE;
import static dev.fencing.it.boot.ProofApp.getJson;
import static dev.fencing.it.boot.ProofApp.list;
import static dev.fencing.it.boot.ProofApp.map;
import static dev.fencing.it.boot.ProofApp.sample;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The starter in a real Spring Boot application ({@link dev.fencing.it.boot.app.ProofApplication}) on a real database,
 * configured by properties only: a Spring Data JDBC repository and a Spring Data JPA repository with {@code @Fenced}
 * writes, Boot's {@code JpaTransactionManager}, Flyway, the {@code Fencing-Token} filter, actuator and Prometheus,
 * everything over real HTTP. Subclasses name the database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractProofTest {

    private ProofDatabase database;
    private ConfigurableApplicationContext context;
    private RestClient http;

    abstract ProofDatabase database();

    @BeforeAll
    void start() throws SQLException {
        database = database();
        database.create();
        context = ProofApp.start(database);
        http = ProofApp.http(ProofApp.port(context));
    }

    @AfterAll
    void stop() throws SQLException {
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

    @Test
    void theStarterConfiguresTheStoreAndIssuerFromPropertiesOnBootsJpaTransactionManager() {
        assertThat(context.getBean(PlatformTransactionManager.class)).isInstanceOf(JpaTransactionManager.class);
        assertThat(context.getBean(FenceStore.class)).isInstanceOfSatisfying(JdbcFenceStore.class,
                store -> assertThat(store.table()).isEqualTo(FENCE_TABLE));
        assertThat(context.getBean(JdbcTokenIssuer.class).table()).isEqualTo(LEASE_TABLE);
    }

    @Test
    void theJdbcRepositoryWritesWithTheIssuersTokens() throws SQLException {
        AccountService accounts = context.getBean(AccountService.class);
        AccountService.Deposit first = accounts.depositAcquiring(1, 10);
        AccountService.Deposit second = accounts.depositAcquiring(1, 5);

        assertThat(second.token()).isGreaterThan(first.token());
        assertThat(second.balance()).isEqualTo(15);
        assertThat(database.balance(1)).hasValue(15);
        assertThat(database.maxSeen("accounts")).hasValue(second.token());
    }

    /**
     * The fence statement runs on the JPA transaction's own connection: its uncommitted max_seen is visible to the
     * EntityManager, and a failure after the check (an exception after the repository call, a CHECK constraint at
     * flush) rolls back max_seen and the entity together.
     */
    @Test
    void theJpaFenceJoinsTheJpaTransactionAndRollsBackWithTheEntity() throws SQLException {
        OrderService orders = context.getBean(OrderService.class);
        long committed = orders.place(1, "anvil", 2);
        assertThat(database.orderExists(1)).isTrue();
        assertThat(database.maxSeen("orders")).hasValue(committed);

        // an exception after the fenced save, inside the same @Transactional method
        OrderService.FailedAfterFence failed = catchFailedAfterFence(() -> orders.placeThenFail(2, "rocket", 1));
        assertThat(failed.token).isGreaterThan(committed);
        assertThat(failed.maxSeenInTransaction)
                .as("the fence's update is visible on the EntityManager's connection before commit")
                .isEqualTo(failed.token);
        assertThat(database.orderExists(2)).as("the order rolled back").isFalse();
        assertThat(database.maxSeen("orders")).as("max_seen rolled back with it").hasValue(committed);

        // a constraint violation when the commit flushes the entity, after the check accepted
        assertThatThrownBy(() -> orders.place(3, "negative", 0))
                .hasRootCauseInstanceOf(SQLException.class);
        assertThat(database.orderExists(3)).isFalse();
        assertThat(database.maxSeen("orders")).as("max_seen rolled back with the failed flush").hasValue(committed);

        // the rolled-back checks left no trace: the next token is accepted and committed
        long next = orders.place(4, "spring", 3);
        assertThat(next).isGreaterThan(failed.token);
        assertThat(database.orderExists(4)).isTrue();
        assertThat(database.maxSeen("orders")).hasValue(next);
    }

    private static OrderService.FailedAfterFence catchFailedAfterFence(Runnable call) {
        try {
            call.run();
        } catch (OrderService.FailedAfterFence e) {
            return e;
        }
        throw new AssertionError("placeThenFail did not fail");
    }

    @Test
    void aStaleTokenOverHttpIsRefusedWith409AndListedOnTheFencingEndpoint() throws SQLException {
        AccountService.Deposit older = http.post().uri("/accounts/2/deposit/5").retrieve()
                .body(AccountService.Deposit.class);
        AccountService.Deposit written = http.post().uri("/accounts/2/deposit/5").retrieve()
                .body(AccountService.Deposit.class);
        assertThat(older).isNotNull();
        assertThat(written).isNotNull();
        long maxSeen = written.token();
        assertThat(maxSeen).isGreaterThan(older.token());
        assertThat(database.maxSeen("accounts")).hasValue(maxSeen);
        long balance = database.balance(2).orElseThrow();

        // the older holder's token, presented by a caller after the newer holder wrote
        FencingToken stale = new FencingToken("accounts", older.token(), "zombie");
        ResponseEntity<Map<String, Object>> refused = http.post().uri("/internal/accounts/2/deposit/100")
                .header(FencingHeader.NAME, FencingHeader.format(List.of(stale)))
                .exchange((request, response) -> ResponseEntity.status(response.getStatusCode())
                        .headers(response.getHeaders())
                        .body(response.bodyTo(new ParameterizedTypeReference<Map<String, Object>>() {
                        })));

        assertThat(refused.getStatusCode().value()).isEqualTo(409);
        assertThat(refused.getHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
        assertThat(refused.getBody()).containsEntry("status", 409).containsEntry("title", "Stale fencing token")
                .containsEntry("resource", "accounts").containsEntry("presented", stale.unsigned().toText())
                .containsEntry("verdict", "stale").containsKey("detail");
        assertThat(((Number) refused.getBody().get("maxSeen")).longValue()).isEqualTo(maxSeen);
        assertThat(database.balance(2)).as("nothing written").hasValue(balance);
        assertThat(database.maxSeen("accounts")).hasValue(maxSeen);

        Map<String, Object> fencing = getJson(http, "/actuator/fencing");
        assertThat(map(fencing.get("store"))).containsEntry("type", "JdbcFenceStore")
                .containsEntry("table", FENCE_TABLE);
        assertThat(map(fencing.get("issuer"))).containsEntry("type", "JdbcTokenIssuer")
                .containsEntry("table", LEASE_TABLE);
        assertThat(fencing).containsKey("acquireTimeout");
        assertThat(map(map(fencing.get("checks")).get("accounts"))).containsEntry("stale", 1);
        assertThat(map(map(fencing.get("acquisitions")).get("accounts"))).containsKey("acquired");
        List<Map<String, Object>> rejections = list(fencing.get("rejections"));
        assertThat(rejections).hasSize(1);
        Map<String, Object> rejection = rejections.get(0);
        assertThat(rejection).containsEntry("resource", "accounts").containsEntry("verdict", "stale")
                .containsKeys("time", "method").doesNotContainKey("holder");
        assertThat(((Number) rejection.get("presentedValue")).longValue()).isEqualTo(stale.value());
        assertThat(((Number) rejection.get("maxSeen")).longValue()).isEqualTo(maxSeen);
        assertThat((String) rejection.get("method")).contains("save");

        Map<String, Object> resource = getJson(http, "/actuator/fencing/accounts");
        assertThat(resource).containsEntry("resource", "accounts");
        assertThat(((Number) resource.get("maxSeen")).longValue()).isEqualTo(maxSeen);
        assertThat(map(resource.get("checks"))).containsEntry("stale", 1);
    }

    @Test
    void prometheusShowsJvmHikariAndFencingSeriesWithTheCommonTag() {
        context.getBean(AccountService.class).depositAcquiring(3, 1); // at least one check and one acquisition

        String scrape = http.get().uri("/actuator/prometheus").retrieve().body(String.class);
        String tag = "application=\"" + APPLICATION_TAG + "\"";
        for (String prefix : List.of("jvm_", "hikaricp_", "fencing_")) {
            List<String> series = scrape.lines().filter(line -> line.startsWith(prefix)).toList();
            assertThat(series).as(prefix + "* series").isNotEmpty().allSatisfy(line -> assertThat(line).contains(tag));
        }
        assertThat(sample(scrape, "fencing_checks_total", tag, "resource=\"accounts\"", "outcome=\"accepted\""))
                .isGreaterThanOrEqualTo(1.0);
        assertThat(sample(scrape, "fencing_acquisitions_total", tag, "resource=\"accounts\"",
                "outcome=\"acquired\"")).isGreaterThanOrEqualTo(1.0);
    }

    @Test
    void healthShowsTheFencingComponentUp() {
        Map<String, Object> health = getJson(http, "/actuator/health");
        assertThat(health).containsEntry("status", "UP");
        Map<String, Object> fencing = map(map(health.get("components")).get("fencing"));
        assertThat(fencing).containsEntry("status", "UP");
        Map<String, Object> details = map(fencing.get("details"));
        assertThat(map(details.get("store"))).containsEntry("type", "JdbcFenceStore")
                .containsEntry("table", FENCE_TABLE);
        assertThat(map(details.get("issuer"))).containsEntry("type", "JdbcTokenIssuer")
                .containsEntry("table", LEASE_TABLE);
    }
}
