package dev.fencing.it.boot;

import dev.fencing.it.boot.signing.SigningProofApplication;
import dev.fencing.web.FencingHeader;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.client.RestClient;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * Starting {@link SigningProofApplication} on a proof database with the given {@code fencing.signing.*} properties,
 * and posting {@code Fencing-Token} headers to it over HTTP.
 */
final class SigningProof {

    private SigningProof() {
    }

    /** A fresh 256-bit HMAC secret in Base64. */
    static String hmacSecret() {
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        return Base64.getEncoder().encodeToString(secret);
    }

    static ConfigurableApplicationContext start(ProofDatabase database, List<String> extra) {
        List<String> properties = new ArrayList<>(database.properties());
        properties.addAll(List.of(
                "server.port=0",
                "server.address=127.0.0.1",
                "spring.main.banner-mode=off",
                "spring.jpa.open-in-view=false",
                "spring.jpa.hibernate.ddl-auto=none",
                "fencing.store.jdbc.table=" + ProofApp.FENCE_TABLE,
                "fencing.issuer.jdbc.table=" + ProofApp.LEASE_TABLE,
                "fencing.web.filter.url-patterns=/internal/*",
                "management.endpoints.web.exposure.include=health,prometheus,fencing,configprops,env"));
        properties.addAll(extra);
        return new SpringApplicationBuilder(SigningProofApplication.class)
                .properties(properties.toArray(String[]::new))
                .run();
    }

    /** Posts to {@code path} with {@code header} as the {@code Fencing-Token} ({@code null}: none). */
    static ResponseEntity<Map<String, Object>> post(RestClient http, String path, String header) {
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
