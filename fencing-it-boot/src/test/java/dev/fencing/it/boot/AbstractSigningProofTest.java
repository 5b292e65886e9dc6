package dev.fencing.it.boot;

import dev.fencing.it.boot.signing.SigningProofApplication;
import dev.fencing.web.FencingHeader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.client.RestClient;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Runs {@link SigningProofApplication} on a PostgreSQL schema of its own, configured as the proof application is
 * ({@link ProofApp#properties}) plus what {@link #properties()} adds (the {@code fencing.signing.*} setup under test),
 * and posts {@code Fencing-Token} headers to it over HTTP. The schema is dropped at the end.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(180)
abstract class AbstractSigningProofTest {

    /** Issue 14's forged header: the largest value a token can have, for an account. */
    static final String FORGED = "accounts:3#9223372036854775807@evil";

    ProofDatabase database;
    ConfigurableApplicationContext context;
    RestClient http;

    /** The properties of this proof, added after (and so overriding) the proof application's. */
    abstract List<String> properties() throws Exception;

    @BeforeAll
    void start() throws Exception {
        database = ProofDatabase.postgres();
        database.create();
        List<String> properties = new ArrayList<>(ProofApp.properties(database));
        properties.add("management.endpoints.web.exposure.include=health,prometheus,fencing,configprops,env");
        properties.addAll(properties());
        context = new SpringApplicationBuilder(SigningProofApplication.class)
                .properties(properties.toArray(String[]::new))
                .run();
        http = ProofApp.http(ProofApp.port(context));
    }

    @AfterAll
    void stop() throws Exception {
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

    /** Posts to {@code path} with {@code header} as the {@code Fencing-Token} ({@code null}: none). */
    ResponseEntity<Map<String, Object>> post(String path, String header) {
        return http.post().uri(path).headers(headers -> {
            if (header != null) {
                headers.set(FencingHeader.NAME, header);
            }
        }).exchange((request, response) -> {
            MediaType type = response.getHeaders().getContentType();
            Map<String, Object> body = type != null && MediaType.APPLICATION_PROBLEM_JSON.isCompatibleWith(type)
                    ? response.bodyTo(new ParameterizedTypeReference<Map<String, Object>>() {
                    })
                    : Map.of("body", String.valueOf(response.bodyTo(String.class)));
            return ResponseEntity.status(response.getStatusCode()).headers(response.getHeaders()).body(body);
        });
    }
}
