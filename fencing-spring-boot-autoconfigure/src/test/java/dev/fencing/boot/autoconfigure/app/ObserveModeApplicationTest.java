package dev.fencing.boot.autoconfigure.app;

import dev.fencing.annotation.Fenced;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.stereotype.Repository;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Turning fencing on with the starter, on PostgreSQL over real HTTP: with {@code fencing.modes.accounts=observe} a
 * stale header and a call without a token both run, are counted with {@code enforced="false"} and listed by
 * {@code GET /actuator/fencing}; {@code POST /actuator/fencing} switches the resource to enforce without a restart
 * and the next stale call is refused. An unknown mode, or observe with check-at-commit, fails startup.
 */
@Timeout(120)
class ObserveModeApplicationTest {

    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

    private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private final String accountsTable = "observe_account_" + suffix;
    private final String fenceTable = "observe_max_seen_" + suffix;
    private final String leaseTable = "observe_lease_" + suffix;
    private final JdbcTemplate admin = new JdbcTemplate(new DriverManagerDataSource(URL, "postgres", ""));

    @SpringBootApplication
    @Import({Ledger.class, Deposits.class, LedgerController.class})
    static class ObserveApplication {
        @org.springframework.context.annotation.Bean
        MeterRegistry meterRegistry() {
            return new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        }
    }

    @Repository
    static class Ledger {
        private final JdbcTemplate jdbc;
        private final String table;

        Ledger(JdbcTemplate jdbc, org.springframework.core.env.Environment env) {
            this.jdbc = jdbc;
            this.table = env.getRequiredProperty("test.accounts-table");
        }

        @Fenced(resource = "accounts")
        public void add(long amount) {
            jdbc.update("UPDATE " + table + " SET balance = balance + ? WHERE id = 1", amount);
        }

        long balance() {
            return jdbc.queryForObject("SELECT balance FROM " + table + " WHERE id = 1", Long.class);
        }
    }

    @Service
    static class Deposits {
        private final Ledger ledger;

        Deposits(Ledger ledger) {
            this.ledger = ledger;
        }

        @Fenced(resource = "accounts", acquire = true)
        @Transactional
        public void deposit(long amount) {
            ledger.add(amount);
        }
    }

    @RestController
    static class LedgerController {
        private final Ledger ledger;

        LedgerController(Ledger ledger) {
            this.ledger = ledger;
        }

        @PostMapping("/internal/deposit/{amount}")
        String deposit(@PathVariable("amount") long amount) {
            ledger.add(amount);
            return "ok";
        }
    }

    private ConfigurableApplicationContext start(String... extra) {
        admin.execute("CREATE TABLE IF NOT EXISTS " + accountsTable
                + " (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL)");
        admin.update("INSERT INTO " + accountsTable + " (id, balance) VALUES (1, 0) ON CONFLICT DO NOTHING");
        List<String> properties = new ArrayList<>(List.of(
                "server.port=0",
                "spring.main.banner-mode=off",
                "spring.flyway.enabled=false",
                "spring.autoconfigure.exclude=org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration",
                "spring.datasource.url=" + URL,
                "spring.datasource.username=postgres",
                "test.accounts-table=" + accountsTable,
                "fencing.store.jdbc.table=" + fenceTable,
                "fencing.store.jdbc.initialize-schema=always",
                "fencing.issuer.type=jdbc",
                "fencing.issuer.jdbc.table=" + leaseTable,
                "fencing.issuer.jdbc.initialize-schema=always",
                "fencing.web.filter.url-patterns=/internal/*",
                "management.endpoints.web.exposure.include=fencing"));
        properties.addAll(List.of(extra));
        return new SpringApplicationBuilder(ObserveApplication.class).properties(properties.toArray(String[]::new))
                .run();
    }

    @AfterEach
    void dropTables() {
        for (String table : List.of(accountsTable, fenceTable, leaseTable)) {
            admin.execute("DROP TABLE IF EXISTS " + table);
        }
    }

    @Test
    void observeLetsStaleAndMissingThroughCountedAndTheEndpointSwitchesToEnforce() throws Exception {
        try (ConfigurableApplicationContext context = start("fencing.modes.accounts=observe")) {
            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            Deposits deposits = context.getBean(Deposits.class);
            Ledger ledger = context.getBean(Ledger.class);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            deposits.deposit(10);                                      // token 1
            deposits.deposit(10);                                      // token 2

            assertThat(deposit(port, new FencingToken("accounts", 1, "zombie")).statusCode()).isEqualTo(200);
            ledger.add(5);                                             // no token bound at all
            assertThat(ledger.balance()).isEqualTo(10 + 10 + 100 + 5);
            assertThat(maxSeen()).as("the stale token did not advance max_seen").isEqualTo(2);
            assertThat(count(registry, "stale", "false")).isEqualTo(1);
            assertThat(count(registry, "missing", "false")).isEqualTo(1);
            assertThat(count(registry, "accepted", "false")).isEqualTo(2);
            assertThat(count(registry, "stale", "true")).isZero();

            HttpResponse<String> report = get(port);
            assertThat(report.statusCode()).isEqualTo(200);
            assertThat(report.body()).contains("\"withoutToken\":[\"ObserveModeApplicationTest.Ledger.add(long)\"]",
                    "\"resources\":{\"accounts\":\"observe\"}", "\"lastOutcome\":\"missing\"");

            HttpResponse<String> toObserveRefused = switchMode(port, "{\"resource\":\"orders\",\"mode\":\"observe\"}");
            assertThat(toObserveRefused.statusCode()).isEqualTo(400);
            assertThat(toObserveRefused.body()).contains("fencing.admin.enabled");
            // the admin's floor raise without fencing.admin.enabled (an operator's trial got a bare 400)
            HttpResponse<String> raiseRefused = switchMode(port, "{\"afterRestore\":true,\"atLeast\":40}");
            assertThat(raiseRefused.statusCode()).isEqualTo(400);
            assertThat(raiseRefused.body()).contains("afterRestore").contains("need fencing.admin.enabled=true");
            HttpResponse<String> unknown = switchMode(port, "{\"resource\":\"accounts\",\"mode\":\"watch\"}");
            assertThat(unknown.statusCode()).isEqualTo(400);
            assertThat(unknown.body()).contains("watch");

            HttpResponse<String> toEnforce = switchMode(port, "{\"resource\":\"accounts\",\"mode\":\"enforce\"}");
            assertThat(toEnforce.statusCode()).isEqualTo(200);
            assertThat(toEnforce.body()).contains("\"accounts\":\"enforce\"").contains("this instance only");

            assertThat(deposit(port, new FencingToken("accounts", 1, "zombie")).statusCode()).isEqualTo(409);
            assertThat(ledger.balance()).isEqualTo(125);
            assertThat(count(registry, "stale", "true")).isEqualTo(1);
        }
    }

    /**
     * With {@code fencing.admin.enabled=true} the admin extension's {@code POST /actuator/fencing} replaces the
     * endpoint's own, so it must switch modes too (it once answered every mode switch with the floor raise's 400).
     */
    @Test
    void withAdminEnabledTheSamePostSwitchesModesAndRaisesFloors() throws Exception {
        try (ConfigurableApplicationContext context = start("fencing.admin.enabled=true",
                "fencing.admin.allow-unsecured=true")) {
            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            Deposits deposits = context.getBean(Deposits.class);
            Ledger ledger = context.getBean(Ledger.class);
            deposits.deposit(10);                                      // token 1
            deposits.deposit(10);                                      // token 2
            FencingToken zombie = new FencingToken("accounts", 1, "zombie");
            assertThat(deposit(port, zombie).statusCode()).isEqualTo(409);

            // a misspelt key was dropped by Boot, and the switch ran for every resource (a new user's re-trial)
            HttpResponse<String> misspelt = switchMode(port, "{\"resourse\":\"accounts\",\"mode\":\"observe\"}");
            assertThat(misspelt.statusCode()).isEqualTo(400);
            assertThat(misspelt.body())
                    .contains("unknown key 'resourse' (did you mean 'resource'?)", "nothing changed");
            // an unset variable in a script: the empty resource switched every resource
            HttpResponse<String> empty = switchMode(port, "{\"resource\":\"\",\"mode\":\"observe\"}");
            assertThat(empty.statusCode()).isEqualTo(400);
            assertThat(empty.body()).contains("no value for 'resource'");
            HttpResponse<String> nothing = switchMode(port, "{\"resource\":null,\"mode\":\"observe\"}");
            assertThat(nothing.statusCode()).isEqualTo(400);
            assertThat(context.getBean(dev.fencing.mode.FenceModes.class).defaultMode())
                    .isEqualTo(dev.fencing.mode.FenceMode.ENFORCE);
            HttpResponse<String> toObserve = switchMode(port, "{\"resource\":\"accounts\",\"mode\":\"observe\"}");
            assertThat(toObserve.statusCode()).as(toObserve.body()).isEqualTo(200);
            assertThat(toObserve.body()).contains("\"accounts\":\"observe\"");
            assertThat(deposit(port, zombie).statusCode()).as("observed, so it runs").isEqualTo(200);
            assertThat(ledger.balance()).isEqualTo(10 + 10 + 100);

            HttpResponse<String> toEnforce = switchMode(port, "{\"resource\":\"accounts\",\"mode\":\"enforce\"}");
            assertThat(toEnforce.statusCode()).as(toEnforce.body()).isEqualTo(200);
            assertThat(toEnforce.body()).contains("\"accounts\":\"enforce\"");
            assertThat(deposit(port, zombie).statusCode()).isEqualTo(409);
            assertThat(ledger.balance()).isEqualTo(120);

            HttpResponse<String> unknown = switchMode(port, "{\"resource\":\"accounts\",\"mode\":\"watch\"}");
            assertThat(unknown.statusCode()).isEqualTo(400);
            assertThat(unknown.body()).contains("watch");
            HttpResponse<String> both = switchMode(port, "{\"mode\":\"enforce\",\"afterRestore\":true}");
            assertThat(both.statusCode()).isEqualTo(400);
            assertThat(both.body()).contains("not both");
            HttpResponse<String> neither = switchMode(port, "{}");
            assertThat(neither.statusCode()).isEqualTo(400);
            assertThat(neither.body()).contains("mode", "afterRestore");
            assertThat(maxSeen()).as("no refused request changed max_seen").isEqualTo(2);

            HttpResponse<String> raised = switchMode(port, "{\"afterRestore\":true,\"atLeast\":7}");
            assertThat(raised.statusCode()).as(raised.body()).isEqualTo(200);
            assertThat(raised.body()).contains("\"examined\"", "\"atLeast\":7");
            assertThat(maxSeen()).isEqualTo(7);
        }
    }

    /**
     * A read-only endpoint serves no write operation, so admin enabled without Spring Security has nothing open: it
     * starts (a re-trial's harmless setup was refused), warns that the admin operations are not served, and a POST
     * changes nothing.
     */
    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void aReadOnlyEndpointNeedsNoSecurityAndServesNoWrite(CapturedOutput output) throws Exception {
        try (ConfigurableApplicationContext context = start("fencing.admin.enabled=true",
                "management.endpoint.fencing.access=read-only")) {
            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            context.getBean(Deposits.class).deposit(10);                // token 1
            context.getBean(Deposits.class).deposit(10);                // token 2
            assertThat(get(port).statusCode()).isEqualTo(200);
            HttpResponse<String> toObserve = switchMode(port, "{\"resource\":\"accounts\",\"mode\":\"observe\"}");
            assertThat(toObserve.statusCode()).as(toObserve.body()).isGreaterThanOrEqualTo(400);
            assertThat(context.getBean(dev.fencing.mode.FenceModes.class).mode("accounts"))
                    .isEqualTo(dev.fencing.mode.FenceMode.ENFORCE);
            assertThat(deposit(port, new FencingToken("accounts", 1, "zombie")).statusCode()).isEqualTo(409);
        }
        assertThat(output.getAll()).contains("fencing endpoint's access is READ_ONLY")
                .contains("are not served").doesNotContain("Spring Security is not on the class path");
    }

    @Test
    void anUnknownModeFailsStartupNamingTheProperty() {
        assertThatThrownBy(() -> start("fencing.modes.accounts=watch").close())
                .hasStackTraceContaining("fencing.modes.accounts").hasStackTraceContaining("'watch'");
    }

    @Test
    void observeWithCheckAtCommitFailsStartup() {
        assertThatThrownBy(() -> start("fencing.mode=observe", "fencing.store.jdbc.check-at-commit=true").close())
                .hasStackTraceContaining("check-at-commit")
                .hasStackTraceContaining("observe mode as the default of every resource");
    }

    private static double count(MeterRegistry registry, String outcome, String enforced) {
        return registry.find(FencingMetrics.CHECKS).tag("resource", "accounts").tag("outcome", outcome)
                .tag("enforced", enforced).counters().stream().mapToDouble(Counter::count).sum();
    }

    private long maxSeen() {
        return admin.queryForObject("SELECT max_seen FROM " + fenceTable + " WHERE resource = 'accounts'", Long.class);
    }

    private static HttpResponse<String> deposit(int port, FencingToken token) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/internal/deposit/100"))
                .header(FencingHeader.NAME, FencingHeader.format(List.of(token)))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> get(int port) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/actuator/fencing")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> switchMode(int port, String body) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/actuator/fencing"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
