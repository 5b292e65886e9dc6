package dev.fencing.web.reactive;

import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import tools.jackson.databind.json.JsonMapper;

import java.time.Duration;
import java.util.Map;

/** A response as the tests look at it: status, headers, body text (and the body as a problem, when it is one). */
record Answer(int status, HttpHeaders headers, String body) {

    static Answer of(ClientResponse response, String body) {
        return new Answer(response.statusCode().value(), response.headers().asHttpHeaders(), body);
    }

    /** GET {@code uri} with the {@code Fencing-Token} fields given (none: no header). */
    static Answer get(WebClient client, String uri, String... tokenFields) {
        return client.get().uri(uri)
                .headers(headers -> {
                    for (String field : tokenFields) {
                        headers.add("Fencing-Token", field);
                    }
                })
                .exchangeToMono(response -> response.bodyToMono(String.class).defaultIfEmpty("")
                        .map(body -> of(response, body)))
                .block(Duration.ofSeconds(20));
    }

    String contentType() {
        return headers.getContentType() == null ? null : headers.getContentType().toString();
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> problem() {
        return JsonMapper.shared().readValue(body, Map.class);
    }
}
