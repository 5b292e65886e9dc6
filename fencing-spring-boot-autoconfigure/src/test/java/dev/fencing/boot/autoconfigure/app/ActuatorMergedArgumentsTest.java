package dev.fencing.boot.autoconfigure.app;

import dev.fencing.annotation.Fenced;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.stereotype.Repository;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Writes to {@code /actuator/fencing} whose arguments Spring Boot merges otherwise than the request reads, over real
 * HTTP (Tomcat; Netty for WebFlux, also with the actuator on a management port of its own) on PostgreSQL: Boot puts
 * the path's variables, then the JSON body's keys, then the query string's keys into one map, so a query key replaced
 * the body's ({@code ?to=3} with {@code {"to": 90}} lowered to 3) and a body {@code "resource"} replaced the path's
 * (the log and any path-based security rule named another resource than the one changed); a read's query
 * {@code resource} replaced the path's too; and a ';' in the path, which the server drops with what follows it as a
 * path parameter. Each is refused with a 400 and nothing changes, on both stacks.
 */
@Timeout(120)
class ActuatorMergedArgumentsTest {

    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";
    private static final String RESET = "{\"to\": 90, \"override\": true, \"force\": true}";
    private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private final String fenceTable = "merged_max_seen_" + suffix;
    private final String leaseTable = "merged_lease_" + suffix;
    private final JdbcTemplate admin = new JdbcTemplate(new DriverManagerDataSource(URL, "postgres", ""));

    @SpringBootApplication
    @Import(Repo.class)
    static class App {
    }

    @Repository
    static class Repo {
        @Fenced(resource = "accounts", key = "#id")
        public void add(String id) {
        }
    }

    @AfterEach
    void drop() {
        for (String table : List.of(fenceTable, leaseTable)) {
            admin.execute("DROP TABLE IF EXISTS " + table);
        }
    }

    @Test
    void mergedArgumentsAreRefusedOnTheServletStack() throws Exception {
        refused(WebApplicationType.SERVLET);
    }

    @Test
    void mergedArgumentsAreRefusedOnWebFlux() throws Exception {
        refused(WebApplicationType.REACTIVE);
    }

    @Test
    void mergedArgumentsAreRefusedOnWebFluxsManagementPort() throws Exception {
        refused(WebApplicationType.REACTIVE, "management.server.port=0");
    }

    private void refused(WebApplicationType type, String... more) throws Exception {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class).web(type).properties(
                "server.port=0", "spring.main.banner-mode=off", "spring.flyway.enabled=false",
                "spring.autoconfigure.exclude=org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration",
                "spring.datasource.url=" + URL, "spring.datasource.username=postgres",
                "fencing.store.jdbc.table=" + fenceTable, "fencing.store.jdbc.initialize-schema=always",
                "fencing.issuer.type=jdbc", "fencing.issuer.jdbc.table=" + leaseTable,
                "fencing.issuer.jdbc.initialize-schema=always",
                "management.endpoints.web.exposure.include=fencing",
                "fencing.admin.enabled=true", "fencing.admin.allow-unsecured=true").properties(more).run()) {
            String management = context.getEnvironment().getProperty("local.management.port");
            int port = management != null ? Integer.parseInt(management)
                    : ((WebServerApplicationContext) context).getWebServer().getPort();
            insert("accounts:1", 100);
            insert("accounts:2", 100);
            semicolonRefused(port);

            // the reset: a query key replaced the body's (WebFlux lowered accounts:1 to 3, not 90)
            assertRefused(post(port, "/actuator/fencing/accounts:1?to=3", RESET), "the query string ('to=3')");
            // ... or the resource of the path (WebFlux lowered accounts:2, the log and the URL named accounts:1)
            assertRefused(post(port, "/actuator/fencing/accounts:1?resource=accounts:2", RESET), "the query string");
            // the endpoint's path with an escape ('%69' is 'i'): the server matches it decoded, and so must the checks
            assertRefused(post(port, "/actuator/fenc%69ng/accounts:1?to=3", RESET), "the query string ('to=3')");
            assertRefused(post(port, "/actuator/fenc%69ng/accounts:1;v=2", RESET), "';'");
            assertRefused(post(port, "/actuator/%66encing/accounts:1", "{\"resource\": \"accounts:2\", \"to\": 90, "
                    + "\"override\": true, \"force\": true}"), "differs from the path's ('accounts:1')");
            // a body "resource" replaced the path's
            assertRefused(post(port, "/actuator/fencing/accounts:1", "{\"resource\": \"accounts:2\", \"to\": 90, "
                    + "\"override\": true, \"force\": true}"), "differs from the path's ('accounts:1')");
            assertRefused(post(port, "/actuator/fencing/accounts%3A1", "{\"resource\": \"accounts:2\", \"to\": 90, "
                    + "\"override\": true, \"force\": true}"), "differs from the path's ('accounts:1')");
            // the floor raise: a query atLeast replaced the body's
            assertRefused(post(port, "/actuator/fencing?atLeast=500", "{\"afterRestore\": true, \"atLeast\": 1}"),
                    "the query string ('atLeast=500')");
            // the mode switch: a query mode or resource replaced the body's
            assertRefused(post(port, "/actuator/fencing?mode=observe", "{\"mode\": \"enforce\"}"),
                    "the query string ('mode=observe')");
            assertRefused(post(port, "/actuator/fencing?resource=accounts",
                    "{\"mode\": \"observe\", \"resource\": \"notes\"}"), "the query string");
            assertThat(maxSeen("accounts:1")).isEqualTo(100);
            assertThat(maxSeen("accounts:2")).isEqualTo(100);
            // a read of one resource: a query "resource" replaced the path's (accounts:2 shown as accounts:1)
            admin.update("UPDATE " + fenceTable + " SET max_seen = 7 WHERE resource = 'accounts:2'");
            HttpResponse<String> misread = get(port, "/actuator/fencing/accounts:1?resource=accounts:2");
            assertThat(misread.statusCode()).as(misread.body()).isEqualTo(400);
            assertThat(misread.body())
                    .contains("the query string ('resource=accounts:2') names the", "nothing was read")
                    .doesNotContain("\"maxSeen\":7");
            admin.update("UPDATE " + fenceTable + " SET max_seen = 100 WHERE resource = 'accounts:2'");
            assertThat(get(port, "/actuator/fencing/accounts:1?x=1").body()).contains("\"maxSeen\":100");
            assertThat(get(port, "/actuator/fencing").body())
                    .contains("\"modes\":{\"default\":\"enforce\",\"resources\":{}}");

            // what the path and the body say alike is served: a "resource" the same as the path's, and a reset
            HttpResponse<String> same = post(port, "/actuator/fencing/accounts:1", "{\"resource\": \"accounts:1\", "
                    + "\"to\": 90, \"override\": true, \"force\": true}");
            assertThat(same.statusCode()).as(same.body()).isEqualTo(200);
            assertThat(maxSeen("accounts:1")).isEqualTo(90);
            HttpResponse<String> reset = post(port, "/actuator/fencing/accounts:2", RESET);
            assertThat(reset.statusCode()).as(reset.body()).isEqualTo(200);
            assertThat(maxSeen("accounts:2")).isEqualTo(90);
            HttpResponse<String> raise = post(port, "/actuator/fencing", "{\"afterRestore\": true, \"atLeast\": 95}");
            assertThat(raise.statusCode()).as(raise.body()).isEqualTo(200);
            assertThat(maxSeen("accounts:1")).isEqualTo(95);
            HttpResponse<String> observe = post(port, "/actuator/fencing",
                    "{\"mode\": \"observe\", \"resource\": \"accounts\"}");
            assertThat(observe.statusCode()).as(observe.body()).isEqualTo(200);
            // a read keeps its query string (it changes nothing)
            assertThat(get(port, "/actuator/fencing?x=1").statusCode()).isEqualTo(200);
        }
    }

    /**
     * A resource with a ';' in the path of {@code /actuator/fencing/{resource}}: the server reads what follows it as a
     * path parameter and drops it, so {@code accounts:7;v=2} was read, and reset, as {@code accounts:7} (on Tomcat,
     * 100 lowered to 3; on WebFlux too). Refused with a 400 naming the fix ({@code %3B}); written so, it is the
     * resource named.
     */
    private void semicolonRefused(int port) throws Exception {
        insert("accounts:7", 100);
        insert("accounts:7;v=2", 50);
        String reset = "{\"to\": 3, \"override\": true, \"force\": true}";
        assertRefused(post(port, "/actuator/fencing/accounts:7;v=2", reset), "%3B");
        assertRefused(post(port, "/actuator/fencing/accounts:7;v=2", "{\"mode\": \"observe\"}"), "%3B");
        HttpResponse<String> read = get(port, "/actuator/fencing/accounts:7;v=2");
        assertThat(read.statusCode()).isEqualTo(400);
        assertThat(read.body()).contains("%3B", "nothing was read");
        assertThat(maxSeen("accounts:7")).isEqualTo(100);
        assertThat(maxSeen("accounts:7;v=2")).isEqualTo(50);
        assertThat(get(port, "/actuator/fencing/accounts:7").body()).contains("\"maxSeen\":100",
                "\"mode\":\"enforce\"");

        HttpResponse<String> encoded = post(port, "/actuator/fencing/accounts:7%3Bv=2", reset);
        assertThat(encoded.statusCode()).as(encoded.body()).isEqualTo(200);
        assertThat(encoded.body()).contains("\"resource\":\"accounts:7;v=2\"");
        assertThat(maxSeen("accounts:7;v=2")).isEqualTo(3);
        assertThat(maxSeen("accounts:7")).isEqualTo(100);
        assertThat(get(port, "/actuator/fencing/accounts:7%3Bv=2").body()).contains("\"maxSeen\":3");
    }

    private void assertRefused(HttpResponse<String> response, String reason) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
                value -> assertThat(value).contains("json"));
        assertThat(response.body()).contains("\"error\"", reason, "nothing changed");
    }

    private void insert(String resource, long maxSeen) {
        admin.update("INSERT INTO " + fenceTable + " (resource, max_seen, holder, updated_at) "
                + "VALUES (?, ?, 'h', now())", resource, maxSeen);
    }

    private long maxSeen(String resource) {
        return admin.queryForObject("SELECT max_seen FROM " + fenceTable + " WHERE resource = ?", Long.class, resource);
    }

    private static HttpResponse<String> post(int port, String path, String body) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> get(int port, String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .GET().build(), HttpResponse.BodyHandlers.ofString());
    }
}
