package dev.fencing.boot.autoconfigure.app;

import dev.fencing.annotation.Fenced;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
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
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Over real HTTP (Tomcat) on PostgreSQL, signing off: one forged {@code Long.MAX_VALUE} header locks a resource out
 * (every real holder refused), and {@code POST /actuator/fencing/{resource}} (only with fencing.admin.enabled) lowers
 * max_seen to the JDBC lease's highest issued token: the next real holder is accepted, a zombie still refused.
 */
@Timeout(120)
class ForgedTokenRecoveryTest {

    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

    private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private final String accountsTable = "recovery_account_" + suffix;
    private final String fenceTable = "recovery_max_seen_" + suffix;
    private final String leaseTable = "recovery_lease_" + suffix;
    private final JdbcTemplate admin = new JdbcTemplate(new DriverManagerDataSource(URL, "postgres", ""));

    @SpringBootApplication
    @Import({Ledger.class, Deposits.class, LedgerController.class})
    static class RecoveryApplication {
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

    private ConfigurableApplicationContext start(boolean adminEnabled) {
        admin.execute("CREATE TABLE " + accountsTable + " (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL)");
        admin.update("INSERT INTO " + accountsTable + " (id, balance) VALUES (1, 0)");
        return new SpringApplicationBuilder(RecoveryApplication.class).properties(
                "server.port=0",
                "spring.main.banner-mode=off",
                "spring.flyway.enabled=false",
                // an R2DBC driver is on this test class path for the reactive tests: Boot would define a
                // ConnectionFactory and then no DataSource
                "spring.autoconfigure.exclude="
                        + "org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration",
                "spring.datasource.url=" + URL,
                "spring.datasource.username=postgres",
                "test.accounts-table=" + accountsTable,
                "fencing.store.jdbc.table=" + fenceTable,
                "fencing.store.jdbc.initialize-schema=always",
                "fencing.issuer.type=jdbc",
                "fencing.issuer.jdbc.table=" + leaseTable,
                "fencing.issuer.jdbc.initialize-schema=always",
                "fencing.web.filter.url-patterns=/internal/*",
                "management.endpoints.web.exposure.include=fencing",
                "fencing.admin.enabled=" + adminEnabled, "fencing.admin.allow-unsecured=true").run();
    }

    @AfterEach
    void dropTables() {
        for (String table : List.of(accountsTable, fenceTable, leaseTable)) {
            admin.execute("DROP TABLE IF EXISTS " + table);
        }
    }

    @Test
    void aForgedTokenLocksOutAndTheActuatorResetRecoversWithoutAZombieWindow() throws Exception {
        try (ConfigurableApplicationContext context = start(true)) {
            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            Deposits deposits = context.getBean(Deposits.class);
            Ledger ledger = context.getBean(Ledger.class);
            deposits.deposit(10);                                      // token 1
            deposits.deposit(10);                                      // token 2

            // signing off: the forged header is accepted and max_seen becomes Long.MAX_VALUE
            assertThat(deposit(port, new FencingToken("accounts", Long.MAX_VALUE, "evil")).statusCode()).isEqualTo(200);
            assertThat(maxSeen()).isEqualTo(Long.MAX_VALUE);
            assertThatThrownBy(() -> deposits.deposit(1)).isInstanceOf(StaleTokenException.class); // token 3
            assertThatThrownBy(() -> deposits.deposit(1)).isInstanceOf(StaleTokenException.class); // token 4
            assertThat(ledger.balance()).isEqualTo(10 + 10 + 100);
            // a floor raise sent to the resource's path by mistake: it lowered max_seen (a trial); now refused
            HttpResponse<String> misdirected = resetFloor(port, "{\"afterRestore\": true, \"atLeast\": 500000}");
            assertThat(misdirected.statusCode()).isEqualTo(400);
            assertThat(misdirected.body()).contains("belong to POST /actuator/fencing", "nothing changed");
            assertThat(maxSeen()).isEqualTo(Long.MAX_VALUE);
            // values Spring's conversion bent ("yes" as true) or refused without naming the field
            HttpResponse<String> notANumber = resetFloor(port, "{\"to\": \"abc\", \"override\": true}");
            assertThat(notANumber.statusCode()).isEqualTo(400);
            assertThat(notANumber.body()).contains("\\\"to\\\" of POST /actuator/fencing/{resource} must be a whole "
                    + "number", "'abc'", "nothing changed");
            HttpResponse<String> notABoolean = resetFloor(port, "{\"to\": 4, \"override\": \"yes\"}");
            assertThat(notABoolean.statusCode()).isEqualTo(400);
            assertThat(notABoolean.body()).contains("\\\"override\\\" of POST /actuator/fencing/{resource} must be "
                    + "true or false, not 'yes'");
            HttpResponse<String> wrongCase = resetFloor(port, "{\"To\": 3, \"override\": true}");
            assertThat(wrongCase.statusCode()).isEqualTo(400);
            assertThat(wrongCase.body()).contains("unknown key 'To' (did you mean 'to'?)", "nothing changed");
            HttpResponse<String> misspelt = resetFloor(port, "{\"to\": 3, \"overide\": true}");
            assertThat(misspelt.body()).contains("unknown key 'overide' (did you mean 'override'?)");
            // Boot let a body key replace the path's resource: another resource changed than the log's URL named
            HttpResponse<String> redirected = resetFloor(port, "{\"resource\": \"accounts:other\"}");
            assertThat(redirected.statusCode()).isEqualTo(400);
            assertThat(redirected.body()).contains("differs from the path's ('accounts')");
            HttpResponse<String> query = post(port, "/actuator/fencing/accounts?to=3&override=true", "{}");
            assertThat(query.statusCode()).isEqualTo(400);
            assertThat(query.body()).contains("the query string");
            HttpResponse<String> blank = resetFloor(port, "{\"to\": \" \", \"override\": true}");
            assertThat(blank.statusCode()).isEqualTo(400);
            assertThat(blank.body()).contains("no value for 'to'");
            assertThat(maxSeen()).isEqualTo(Long.MAX_VALUE);

            HttpResponse<String> reset = resetFloor(port, "{}");

            assertThat(reset.statusCode()).isEqualTo(200);
            assertThat(reset.body()).contains("\"previousMaxSeen\":" + Long.MAX_VALUE, "\"maxSeen\":4",
                    "\"highestIssued\":4", "actuator");
            assertThat(maxSeen()).isEqualTo(4);
            deposits.deposit(1);                                       // token 5: the next real holder is in
            assertThat(ledger.balance()).isEqualTo(121);
            // a zombie holding token 2 (below the highest issued) stays out, over HTTP too
            HttpResponse<String> zombie = deposit(port, new FencingToken("accounts", 2, "jdbc-zombie"));
            assertThat(zombie.statusCode()).isEqualTo(409);
            assertThat(ledger.balance()).isEqualTo(121);

            HttpResponse<String> nothingToLower = resetFloor(port, "{}");
            assertThat(nothingToLower.statusCode()).isEqualTo(400);
            assertThat(nothingToLower.body()).contains("nothing to lower");
            HttpResponse<String> noOverride = resetFloor(port, "{\"to\": 3}");
            assertThat(noOverride.statusCode()).isEqualTo(409);
            assertThat(noOverride.body()).contains("override");
            assertThat(maxSeen()).isEqualTo(5);
        }
    }

    @Test
    void theResetOperationIsAbsentUnlessEnabled() throws Exception {
        try (ConfigurableApplicationContext context = start(false)) {
            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            assertThat(deposit(port, new FencingToken("accounts", Long.MAX_VALUE, "evil")).statusCode()).isEqualTo(200);

            HttpResponse<String> reset = resetFloor(port, "{}");

            assertThat(reset.statusCode()).isEqualTo(405);
            assertThat(maxSeen()).isEqualTo(Long.MAX_VALUE);
            HttpResponse<String> read = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/actuator/fencing/accounts")).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(read.statusCode()).isEqualTo(200);
            assertThat(read.body()).contains("\"maxSeen\":" + Long.MAX_VALUE);
        }
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

    private static HttpResponse<String> resetFloor(int port, String body) throws Exception {
        return post(port, "/actuator/fencing/accounts", body);
    }

    private static HttpResponse<String> post(int port, String path, String body) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
