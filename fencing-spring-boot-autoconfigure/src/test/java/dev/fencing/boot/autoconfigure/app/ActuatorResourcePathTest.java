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
 * Resource names that a URL path changes, through {@code /actuator/fencing/{resource}} over real HTTP (Tomcat, and
 * Netty for WebFlux) on PostgreSQL.
 */
@Timeout(120)
class ActuatorResourcePathTest {

    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";
    private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private final String fenceTable = "path_max_seen_" + suffix;
    private final String leaseTable = "path_lease_" + suffix;
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

    private void insert(String resource, long maxSeen) {
        admin.update("INSERT INTO " + fenceTable + " (resource, max_seen, holder, updated_at) "
                + "VALUES (?, ?, 'h', now())", resource, maxSeen);
    }

    private long maxSeen(String resource) {
        return admin.queryForObject("SELECT max_seen FROM " + fenceTable + " WHERE resource = ?", Long.class, resource);
    }

    /** GET the resource, or POST {@code body} to it. */
    private static HttpResponse<String> send(int port, String resource, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/actuator/fencing/" + resource));
        if (body == null) {
            request.GET();
        } else {
            request.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        }
        return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * A resource with a ';' in the path of {@code /actuator/fencing/{resource}}: the server reads what follows it as a
     * path parameter and drops it, so {@code accounts:1;v=2} was read, and reset, as {@code accounts:1}. Refused
     * with a 400 naming the fix ({@code %3B}); written so, it is the resource named.
     */
    @Test
    void aSemicolonInTheResourcePathIsRefusedNotReadAsAnotherResource() throws Exception {
        semicolonRefused(WebApplicationType.SERVLET);
    }

    /** On WebFlux too: a POST to {@code accounts:1;v=2} lowered {@code accounts:1} from 100 to 3. */
    @Test
    void aSemicolonInTheResourcePathIsRefusedOnWebFlux() throws Exception {
        semicolonRefused(WebApplicationType.REACTIVE);
    }

    /** On WebFlux with the actuator on a management port of its own (a child context). */
    @Test
    void aSemicolonInTheResourcePathIsRefusedOnWebFluxsManagementPort() throws Exception {
        semicolonRefused(WebApplicationType.REACTIVE, "management.server.port=0");
    }

    private void semicolonRefused(WebApplicationType type, String... more) throws Exception {
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
            insert("accounts:1;v=2", 50);

            // Tomcat and Spring drop a path parameter (';' to the next '/'): this lowered accounts:1 from 100 to 3
            HttpResponse<String> misread = send(port, "accounts:1;v=2",
                    "{\"to\": 3, \"override\": true, \"force\": true}");
            assertThat(misread.statusCode()).as(misread.body()).isEqualTo(400);
            assertThat(misread.body()).contains("';'", "%3B", "nothing changed");
            HttpResponse<String> modeSwitch = send(port, "accounts:1;v=2", "{\"mode\": \"observe\"}");
            assertThat(modeSwitch.statusCode()).as(modeSwitch.body()).isEqualTo(400);
            HttpResponse<String> read = send(port, "accounts:1;v=2", null);
            assertThat(read.statusCode()).isEqualTo(400);
            assertThat(read.body()).contains("%3B", "nothing was read");
            assertThat(maxSeen("accounts:1")).isEqualTo(100);
            assertThat(maxSeen("accounts:1;v=2")).isEqualTo(50);
            assertThat(send(port, "accounts:1", null).body()).contains("\"maxSeen\":100", "\"mode\":\"enforce\"");

            // written as %3B, the resource is the one named
            HttpResponse<String> encoded = send(port, "accounts:1%3Bv=2",
                    "{\"to\": 3, \"override\": true, \"force\": true}");
            assertThat(encoded.statusCode()).as(encoded.body()).isEqualTo(200);
            assertThat(encoded.body()).contains("\"resource\":\"accounts:1;v=2\"");
            assertThat(maxSeen("accounts:1;v=2")).isEqualTo(3);
            assertThat(maxSeen("accounts:1")).isEqualTo(100);
            assertThat(send(port, "accounts:1%3Bv=2", null).body()).contains("\"maxSeen\":3");
        }
    }
}
