package dev.fencing.boot.autoconfigure;

import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.core.Ordered;
import org.springframework.core.ResolvableType;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.codec.HttpMessageReader;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Refuses, on the WebFlux stack, a request to the {@code fencing} actuator endpoint that Spring Boot would serve
 * otherwise than it reads, with a 400 naming the fix and before anything is read or changed; the servlet stack's
 * checks are {@link StrictWriteBodies}'s, which cannot see the request on WebFlux (the operation gets the merged
 * arguments only, on another thread). Refused: a raw path with a ';' (WebFlux drops what follows it up to the next
 * '/' as a path parameter, so {@code POST /actuator/fencing/accounts:1;v=2} lowered {@code accounts:1}); a query
 * string on a write (Boot lets a query key replace the body's: {@code ?to=3} with {@code {"to": 90}} lowered to 3);
 * a body {@code "resource"} that differs from the path's {@code {resource}} (Boot lets it replace the path's,
 * so the log and a path-based security rule named another resource than the one changed); and a read of one
 * resource whose query string names the {@code resource} (Boot read that one instead of the path's). To compare the
 * body's "resource", the body of a write to {@code /actuator/fencing/{resource}} is read here with the
 * application's codecs and handed on as read.
 */
final class ActuatorRequestFilter implements WebFilter, Ordered {

    private static final EndpointId FENCING = EndpointId.of("fencing");

    /** The operation's selector, the path variable of {@code /actuator/fencing/{resource}}. */
    private static final String SELECTOR = "resource";

    /** The methods that read: a query string changes nothing there. */
    private static final Set<HttpMethod> READS = Set.of(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS);

    /** Bodies larger are refused (Boot's codecs refuse them too: their default limit is 256 KiB). */
    private static final int MAX_BODY = 256 * 1024;

    /** What the body's reading gives when it is larger than {@link #MAX_BODY}. */
    private static final byte[] TOO_LARGE = new byte[0];

    private static final ResolvableType BODY = ResolvableType.forClassWithGenerics(Map.class, String.class,
            Object.class);

    private final Supplier<PathMappedEndpoints> endpoints;
    private final Supplier<ServerCodecConfigurer> codecs;

    ActuatorRequestFilter(Supplier<PathMappedEndpoints> endpoints, Supplier<ServerCodecConfigurer> codecs) {
        this.endpoints = endpoints;
        this.codecs = codecs;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpRequest request = exchange.getRequest();
        PathContainer within = request.getPath().pathWithinApplication();
        String raw = within.value();
        String endpoint = endpointPath();
        if (endpoint == null || !isFencingEndpoint(within, endpoint)) {
            return chain.filter(exchange);
        }
        boolean read = READS.contains(request.getMethod());
        String pathParameter = StrictWriteBodies.pathParameterProblem(raw);
        if (pathParameter != null) {
            return refuse(exchange, pathParameter, read);
        }
        if (read) {
            // the read of one resource: Boot lets a query "resource" replace the path's
            return request.getQueryParams().containsKey(SELECTOR) && selector(within, endpoint) != null
                    ? refuse(exchange, StrictWriteBodies.selectorQueryProblem(SELECTOR,
                    request.getURI().getRawQuery()), true) : chain.filter(exchange);
        }
        String query = request.getURI().getRawQuery();
        if (query != null && !query.isBlank()) {
            return refuse(exchange, StrictWriteBodies.queryStringProblem(query), false);
        }
        String resource = selector(within, endpoint);
        return resource == null ? chain.filter(exchange) : checkBody(exchange, chain, resource);
    }

    /**
     * The path's {@code {resource}} as the operation's path variable gets it (decoded), or {@code null} when the
     * path is not {@code /actuator/fencing/{resource}}.
     */
    private static String selector(PathContainer within, String endpoint) {
        int skip = PathContainer.parsePath(endpoint).elements().size();
        if (within.elements().size() != skip + 2
                || !(within.elements().get(skip + 1) instanceof PathContainer.PathSegment segment)) {
            return null;
        }
        return segment.valueToMatch();
    }

    /** Reads the body once, refuses it when its "resource" is another than the path's, else hands it on as read. */
    private Mono<Void> checkBody(ServerWebExchange exchange, WebFilterChain chain, String fromPath) {
        ServerHttpRequest request = exchange.getRequest();
        return DataBufferUtils.join(request.getBody(), MAX_BODY).map(buffer -> {
            byte[] bytes = new byte[buffer.readableByteCount()];
            buffer.read(bytes);
            DataBufferUtils.release(buffer);
            return bytes;
        }).defaultIfEmpty(new byte[0]).onErrorResume(DataBufferLimitException.class, e -> Mono.just(TOO_LARGE))
                .flatMap(bytes -> bytes == TOO_LARGE ? refuse(exchange, "the body of this fencing write is larger "
                        + "than " + MAX_BODY / 1024 + " KiB", false) : checked(exchange, chain, fromPath, bytes));
    }

    private Mono<Void> checked(ServerWebExchange exchange, WebFilterChain chain, String fromPath, byte[] bytes) {
        ServerHttpRequest request = exchange.getRequest();
        ServerHttpRequest cached = new ServerHttpRequestDecorator(request) {
            @Override
            public Flux<DataBuffer> getBody() {
                return bytes.length == 0 ? Flux.empty()
                        : Flux.defer(() -> Flux.just(exchange.getResponse().bufferFactory().wrap(bytes)));
            }
        };
        return bodyResource(cached).map(fromBody -> fromBody.isBlank() || fromBody.equals(fromPath) ? ""
                : StrictWriteBodies.selectorProblem(SELECTOR, fromBody, fromPath)).defaultIfEmpty("")
                .flatMap(problem -> problem.isEmpty() ? chain.filter(exchange.mutate().request(cached).build())
                        : refuse(exchange, problem, false));
    }

    /**
     * The body's "resource" as Boot reads it ({@code Map<String, String>}, so a number is its text), empty when it
     * has none, a {@code null} one (left to {@link StrictWriteBodies}, which names it), or cannot be read here (left
     * to Boot, which answers it as before).
     */
    @SuppressWarnings("unchecked")
    private Mono<String> bodyResource(ServerHttpRequest request) {
        MediaType type = request.getHeaders().getContentType();
        if (type == null) {
            return Mono.empty();
        }
        for (HttpMessageReader<?> reader : codecs.get().getReaders()) {
            if (reader.canRead(BODY, type)) {
                return ((HttpMessageReader<Map<String, Object>>) reader).readMono(BODY, request, Map.of())
                        .flatMap(body -> Mono.justOrEmpty(body.get(SELECTOR)).map(String::valueOf))
                        .onErrorResume(e -> Mono.empty());
            }
        }
        return Mono.empty();
    }

    private static Mono<Void> refuse(ServerWebExchange exchange, String problem, boolean read) {
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(HttpStatus.BAD_REQUEST);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        String body = "{\"error\":\"" + json(problem + (read ? ": nothing was read" : ": nothing changed")) + "\"}";
        DataBuffer buffer = response.bufferFactory().wrap(body.getBytes(StandardCharsets.UTF_8));
        return response.writeWith(Mono.just(buffer));
    }

    private String endpointPath() {
        PathMappedEndpoints mapped = endpoints.get();
        return mapped == null ? null : mapped.getPath(FENCING);
    }

    /**
     * Whether the path is the endpoint's or below it, as WebFlux matches it: segment by segment, each decoded and
     * without its path parameters ({@code /actuator/fenc%69ng} and {@code /actuator;x=1/fencing} are the endpoint's
     * path; compared as text they passed every check here).
     */
    private static boolean isFencingEndpoint(PathContainer within, String path) {
        List<PathContainer.Element> expected = PathContainer.parsePath(path).elements();
        List<PathContainer.Element> actual = within.elements();
        if (actual.size() < expected.size()) {
            return false;
        }
        for (int i = 0; i < expected.size(); i++) {
            if (expected.get(i) instanceof PathContainer.PathSegment segment
                    ? !(actual.get(i) instanceof PathContainer.PathSegment given)
                    || !given.valueToMatch().equals(segment.valueToMatch())
                    : actual.get(i) instanceof PathContainer.PathSegment) {
                return false;
            }
        }
        return actual.size() == expected.size() || !(actual.get(expected.size()) instanceof PathContainer.PathSegment);
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
