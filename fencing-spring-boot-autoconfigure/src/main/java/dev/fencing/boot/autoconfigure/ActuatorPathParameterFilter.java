package dev.fencing.boot.autoconfigure;

import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/**
 * Refuses, on the WebFlux stack, a request to the {@code fencing} actuator endpoint whose raw path has a ';', with a
 * 400 naming the fix and before anything is read or changed. WebFlux drops what follows a ';' up to the next '/' as
 * a path parameter before the operation sees the path, so {@code POST /actuator/fencing/accounts:1;v=2} lowered
 * {@code accounts:1}; the servlet stack's check is {@link StrictWriteBodies}.
 */
final class ActuatorPathParameterFilter implements WebFilter, Ordered {

    private static final EndpointId FENCING = EndpointId.of("fencing");

    private final Supplier<PathMappedEndpoints> endpoints;

    ActuatorPathParameterFilter(Supplier<PathMappedEndpoints> endpoints) {
        this.endpoints = endpoints;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        String raw = exchange.getRequest().getPath().pathWithinApplication().value();
        if (raw.indexOf(';') < 0 || !isFencingEndpoint(raw)) {
            return chain.filter(exchange);
        }
        String problem = StrictWriteBodies.pathParameterProblem(raw);
        boolean read = HttpMethod.GET.equals(exchange.getRequest().getMethod())
                || HttpMethod.HEAD.equals(exchange.getRequest().getMethod());
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(HttpStatus.BAD_REQUEST);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        String body = "{\"error\":\"" + json(problem + (read ? ": nothing was read" : ": nothing changed")) + "\"}";
        DataBuffer buffer = response.bufferFactory().wrap(body.getBytes(StandardCharsets.UTF_8));
        return response.writeWith(Mono.just(buffer));
    }

    /** Whether the path, its path parameters dropped as the server drops them, is the endpoint's or below it. */
    private boolean isFencingEndpoint(String raw) {
        PathMappedEndpoints mapped = endpoints.get();
        String path = mapped == null ? null : mapped.getPath(FENCING);
        if (path == null) {
            return false;
        }
        String stripped = raw.replaceAll(";[^/]*", "");
        return stripped.equals(path) || stripped.startsWith(path.endsWith("/") ? path : path + "/");
    }

    private static String json(String text) {
        StringBuilder out = new StringBuilder(text.length() + 16);
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    @Override
    public int getOrder() {
        return 0; // after Spring Security's filter chain (-100), whose firewall refuses a ';' already when it is on
    }
}
