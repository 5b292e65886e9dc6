package dev.fencing.boot.autoconfigure.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.annotation.Fenced;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A real Spring Boot web application on PostgreSQL with the auto-configuration and ZERO fencing configuration code:
 * only properties. A {@code @Fenced(acquire = true) @Transactional} service writes through a {@code @Fenced}
 * repository (JDBC store and issuer from properties, inside Boot's own transaction configuration), and a caller's
 * stale token sent over HTTP is refused with 409.
 */
class BootApplicationTest {

    @SpringBootApplication
    @Import({AccountRepository.class, DepositService.class, InternalController.class, PublicController.class})
    static class AccountsApplication {
        /** A servlet of the application's own, not Spring MVC's, into the service that takes its own lock. */
        @org.springframework.context.annotation.Bean
        org.springframework.boot.web.servlet.ServletRegistrationBean<jakarta.servlet.http.HttpServlet> legacyServlet(
                DepositService deposits) {
            return new org.springframework.boot.web.servlet.ServletRegistrationBean<>(
                    new jakarta.servlet.http.HttpServlet() {
                        @Override
                        protected void doPost(jakarta.servlet.http.HttpServletRequest request,
                                              jakarta.servlet.http.HttpServletResponse response)
                                throws java.io.IOException {
                            deposits.deposit(1, 1000);
                            response.getWriter().write("ok");
                        }
                    }, "/legacy/*");
        }
    }

    @Repository
    static class AccountRepository {
        private final JdbcTemplate jdbc;

        AccountRepository(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        @Fenced(resource = "accounts")
        public void add(long id, long amount) {
            jdbc.update("UPDATE boot_starter_it_account SET balance = balance + ? WHERE id = ?", amount, id);
        }

        long balance(long id) {
            return jdbc.queryForObject("SELECT balance FROM boot_starter_it_account WHERE id = ?", Long.class, id);
        }
    }

    @Service
    static class DepositService {
        private final AccountRepository accounts;

        DepositService(AccountRepository accounts) {
            this.accounts = accounts;
        }

        @Fenced(resource = "accounts", acquire = true)
        @Transactional
        public void deposit(long id, long amount) {
            accounts.add(id, amount);
        }
    }

    @RestController
    static class InternalController {
        private final AccountRepository accounts;

        InternalController(AccountRepository accounts) {
            this.accounts = accounts;
        }

        @PostMapping("/internal/accounts/{id}/deposit/{amount}")
        String deposit(@PathVariable("id") long id, @PathVariable("amount") long amount) {
            accounts.add(id, amount);
            return "ok";
        }
    }

    /** A path no token filter covers, into the service that takes its own lock. */
    @RestController
    static class PublicController {
        private final DepositService deposits;

        PublicController(DepositService deposits) {
            this.deposits = deposits;
        }

        @PostMapping("/public/accounts/{id}/deposit/{amount}")
        String deposit(@PathVariable("id") long id, @PathVariable("amount") long amount) {
            deposits.deposit(id, amount);
            return "ok";
        }
    }

    @Test
    void fencesWithPropertiesOnlyAndRefusesAStaleTokenWith409() throws Exception {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(AccountsApplication.class)
                .properties(
                        "server.port=0",
                        "spring.main.banner-mode=off",
                        "spring.flyway.enabled=false", // Flyway is on this test class path for another test
                        // an R2DBC driver is on this test class path for the reactive tests: Boot would define a
                        // ConnectionFactory and then no DataSource
                        "spring.autoconfigure.exclude="
                                + "org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration",
                        "spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test",
                        "spring.datasource.username=postgres",
                        "spring.sql.init.mode=always",
                        "spring.sql.init.schema-locations=classpath:dev/fencing/boot/autoconfigure/app/schema.sql",
                        "fencing.store.jdbc.table=boot_starter_it_max_seen",
                        "fencing.issuer.type=jdbc",
                        "fencing.issuer.jdbc.table=boot_starter_it_lease",
                        "fencing.web.filter.url-patterns=/internal/*")
                .run()) {
            DepositService service = context.getBean(DepositService.class);
            AccountRepository accounts = context.getBean(AccountRepository.class);
            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);

            service.deposit(1, 10);
            service.deposit(1, 5);
            assertThat(accounts.balance(1)).isEqualTo(15);
            long maxSeen = jdbc.queryForObject(
                    "SELECT max_seen FROM boot_starter_it_max_seen WHERE resource = 'accounts'", Long.class);
            assertThat(maxSeen).isGreaterThanOrEqualTo(2);

            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            HttpResponse<String> stale = post(port, new FencingToken("accounts", maxSeen - 1, "zombie"));
            assertThat(stale.statusCode()).isEqualTo(409);
            assertThat(stale.body()).contains("Stale fencing token");
            assertThat(accounts.balance(1)).isEqualTo(15);

            // a caller's token on a path no filter reads: refused before the handler, not set aside unseen by the
            // method that takes its own lock (a zombie's deposit would otherwise land under a fresh lock)
            HttpResponse<String> unread = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + port + "/public/accounts/1/deposit/1000"))
                    .header(FencingHeader.NAME, FencingHeader.format(List.of(
                            new FencingToken("accounts", maxSeen - 1, "zombie"))))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(unread.statusCode()).isEqualTo(403);
            assertThat(unread.body()).contains("Untrusted fencing token").contains("/internal/*")
                    .contains("fencing.web.filter.url-patterns");
            assertThat(accounts.balance(1)).isEqualTo(15);
            HttpResponse<String> own = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + port + "/public/accounts/1/deposit/1"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(own.statusCode()).as("without the header the service takes its own lock").isEqualTo(200);
            assertThat(accounts.balance(1)).isEqualTo(16);

            // the same on a servlet of the application's own, which the MVC interceptor never sees (a trial's
            // zombie header was set aside there, and the acquiring service wrote under a lock of its own)
            HttpResponse<String> legacyZombie = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + port + "/legacy/deposit"))
                    .header(FencingHeader.NAME, FencingHeader.format(List.of(
                            new FencingToken("accounts", maxSeen - 1, "zombie"))))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(legacyZombie.statusCode()).isEqualTo(403);
            assertThat(legacyZombie.body()).contains("Untrusted fencing token").contains("servlet 'legacyServlet'")
                    .contains("fencing.web.filter.url-patterns");
            assertThat(accounts.balance(1)).isEqualTo(16);
            HttpResponse<String> legacy = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + port + "/legacy/deposit"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(legacy.statusCode()).isEqualTo(200);
            assertThat(accounts.balance(1)).isEqualTo(1016);

            HttpResponse<String> fresh = post(port, new FencingToken("accounts", maxSeen + 10, "caller"));
            assertThat(fresh.statusCode()).isEqualTo(200);
            assertThat(accounts.balance(1)).isEqualTo(1116);

            HttpResponse<String> missing = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/internal/accounts/1/deposit/100"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(missing.statusCode()).isEqualTo(428);
            assertThat(accounts.balance(1)).isEqualTo(1116);
        }
    }

    private static HttpResponse<String> post(int port, FencingToken token) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/internal/accounts/1/deposit/100"))
                .header(FencingHeader.NAME, FencingHeader.format(List.of(token)))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }
}
