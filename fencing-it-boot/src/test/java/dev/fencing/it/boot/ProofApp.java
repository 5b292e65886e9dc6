package dev.fencing.it.boot;

import dev.fencing.it.boot.app.ProofApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.web.client.RestClient;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The proof application's properties (fencing by properties only), starting it, and talking to it over HTTP. */
final class ProofApp {

    static final String APPLICATION_TAG = "fencing-proof";
    static final String FENCE_TABLE = "proof_max_seen";
    static final String LEASE_TABLE = "proof_lease";

    private ProofApp() {
    }

    /** Everything the application is configured with: the database's and these, as a user would write them. */
    static List<String> properties(ProofDatabase database) {
        List<String> properties = new ArrayList<>(database.properties());
        properties.addAll(List.of(
                "server.port=0",
                "server.address=127.0.0.1",
                "spring.main.banner-mode=off",
                // spring.jpa.open-in-view left at Boot's default (true), as most applications run: the entity
                // manager bound for the request before a JPA transaction begins must not read as another manager's
                "spring.jpa.hibernate.ddl-auto=none",
                "fencing.store.jdbc.table=" + FENCE_TABLE,
                "fencing.issuer.type=jdbc",
                "fencing.issuer.jdbc.table=" + LEASE_TABLE,
                // short, so that a 'paused' holder loses its lease within a test
                "fencing.issuer.jdbc.lease-time=2s",
                "fencing.web.filter.url-patterns=/internal/*",
                "fencing.web.client.propagate-to=127.0.0.1",
                "management.endpoints.web.exposure.include=health,prometheus,fencing",
                "management.endpoint.health.show-details=always",
                "management.metrics.tags.application=" + APPLICATION_TAG));
        return properties;
    }

    static ConfigurableApplicationContext start(ProofDatabase database) {
        return new SpringApplicationBuilder(ProofApplication.class)
                .properties(properties(database).toArray(String[]::new))
                .run();
    }

    static int port(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    static RestClient http(int port) {
        return RestClient.create("http://127.0.0.1:" + port);
    }

    static Map<String, Object> getJson(RestClient http, String path) {
        return http.get().uri(path).retrieve().body(new ParameterizedTypeReference<Map<String, Object>>() {
        });
    }

    /** The sum of the Prometheus samples of {@code series} whose labels include every one of {@code labels}. */
    static double sample(String scrape, String series, String... labels) {
        return scrape.lines().filter(line -> line.startsWith(series + "{"))
                .filter(line -> List.of(labels).stream().allMatch(line::contains))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                .sum();
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object value) {
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> list(Object value) {
        return (List<Map<String, Object>>) value;
    }
}
