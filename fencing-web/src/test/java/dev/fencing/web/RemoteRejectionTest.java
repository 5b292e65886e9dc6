package dev.fencing.web;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.OutOfRangeTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleState;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.context.support.AnnotationConfigWebApplicationContext;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;
import org.springframework.web.servlet.handler.MappedInterceptor;

import java.io.File;
import java.net.URI;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Over real HTTP on loopback, the caller's side of a refusal: a Spring MVC service whose fenced repository and real
 * {@link FencingExceptionAdvice} answer 409/428 (its store bounds one advance, so out-of-range is among the 409s),
 * and callers using RestClient and RestTemplate with {@link FencingTokenClientInterceptor}. Fencing refusals come back
 * as the library's exceptions and are counted in {@code fencing.remote.rejections} by base resource and outcome; every
 * other answer passes through untouched.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RemoteRejectionTest {

    /** The service's store refuses a token more than this far above max_seen as out-of-range. */
    static final long MAX_ADVANCE = 1_000;

    public static class Ledger {
        final Map<String, String> entries = new ConcurrentHashMap<>();

        @Fenced(resource = "accounts", key = "#account")
        public void write(String account, String entry) {
            entries.put(account, entry);
        }

        public String read(String account) {
            return entries.getOrDefault(account, "");
        }
    }

    @RestController
    public static class LedgerController {
        private final Ledger ledger;

        public LedgerController(Ledger ledger) {
            this.ledger = ledger;
        }

        @PostMapping("/accounts/{account}/entry")
        public String write(@PathVariable("account") String account, @RequestBody String entry) {
            ledger.write(account, entry);
            return "written";
        }

        @GetMapping("/accounts/{account}/entry")
        public String read(@PathVariable("account") String account) {
            return ledger.read(account);
        }

        /** A conflict of the application's own, plain text. */
        @PostMapping("/accounts/{account}/plain-conflict")
        public ResponseEntity<String> plainConflict(@PathVariable("account") String account) {
            return ResponseEntity.status(HttpStatus.CONFLICT).contentType(MediaType.TEXT_PLAIN).body("already booked");
        }

        /** A conflict of the application's own as a problem detail of another type, with look-alike fields. */
        @PostMapping("/accounts/{account}/other-problem")
        public ProblemDetail otherProblem(@PathVariable("account") String account) {
            ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, "out of stock");
            problem.setType(URI.create("https://shop.example/problems/out-of-stock"));
            problem.setProperty("resource", "accounts:" + account);
            problem.setProperty("presented", "accounts:" + account + "#1@x");
            problem.setProperty("maxSeen", 2);
            return problem;
        }

        /** A problem with our fields but no type ("about:blank"): not recognised either. */
        @PostMapping("/accounts/{account}/untyped-problem")
        public ProblemDetail untypedProblem(@PathVariable("account") String account) {
            ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, "some conflict");
            problem.setProperty("resource", "accounts:" + account);
            problem.setProperty("presented", "accounts:" + account + "#1@x");
            problem.setProperty("maxSeen", 2);
            problem.setProperty("verdict", "stale");
            return problem;
        }
    }

    @Configuration
    @EnableWebMvc
    @EnableFencing(proxyTargetClass = true, allowInMemoryStore = true)
    @Import(FencingExceptionAdvice.class)
    static class Service {
        /** Refuses a header on a path no filter covers, as the startup check requires (the docs' plain setup). */
        @Bean
        MappedInterceptor unadmittedTokenInterceptor() {
            return new MappedInterceptor(null, new UnadmittedTokenInterceptor(
                    "this service accepts it only on /accounts/*", java.util.List.of("/accounts/*")));
        }

        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore(MAX_ADVANCE); // bounded, so an out-of-range refusal can come back too
        }

        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }

        @Bean
        Ledger ledger() {
            return new Ledger();
        }

        @Bean
        LedgerController ledgerController(Ledger ledger) {
            return new LedgerController(ledger);
        }
    }

    private Tomcat tomcat;
    private AnnotationConfigWebApplicationContext service;
    private String baseUrl;
    private final SimpleMeterRegistry callerMeters = new SimpleMeterRegistry();
    private RestClient caller;

    @BeforeAll
    void start() throws Exception {
        File base = Files.createTempDirectory("fencing-tomcat-remote").toFile();
        tomcat = new Tomcat();
        tomcat.setBaseDir(base.getAbsolutePath());
        tomcat.setHostname("127.0.0.1");
        tomcat.setPort(0);
        tomcat.getConnector().setProperty("address", "127.0.0.1");
        Context context = tomcat.addContext("", base.getAbsolutePath());
        service = new AnnotationConfigWebApplicationContext();
        service.register(Service.class);
        Tomcat.addServlet(context, "dispatcher", new DispatcherServlet(service)).setLoadOnStartup(1);
        context.addServletMappingDecoded("/", "dispatcher");
        FilterDef filter = new FilterDef();
        filter.setFilterName("fencing");
        filter.setFilter(new FencingTokenFilter());
        context.addFilterDef(filter);
        FilterMap mapping = new FilterMap();
        mapping.setFilterName("fencing");
        mapping.addURLPattern("/accounts/*");
        context.addFilterMap(mapping);
        tomcat.start();
        assertThat(context.getState()).isEqualTo(LifecycleState.STARTED);
        baseUrl = "http://127.0.0.1:" + tomcat.getConnector().getLocalPort();
        caller = RestClient.builder().baseUrl(baseUrl)
                .requestInterceptor(new FencingTokenClientInterceptor().withMeterRegistry(callerMeters)).build();
    }

    @AfterAll
    void stop() throws Exception {
        tomcat.stop();
        tomcat.destroy();
    }

    @AfterEach
    void nothingLeftBound() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    /** Writes entry with {@code token} bound, through {@code client}. */
    private static String write(RestClient client, FencingToken token, String account) {
        try (var ignored = FencingContext.bind(token)) {
            return client.post().uri("/accounts/{account}/entry", account).contentType(MediaType.TEXT_PLAIN)
                    .body("entry " + token.value()).retrieve().body(String.class);
        }
    }

    private double rejections(MeterRegistry registry, String resource, String outcome) {
        Counter counter = registry.find(FencingTokenClientInterceptor.REMOTE_REJECTIONS)
                .tag("resource", resource).tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void aStaleTokenComesBackAsStaleTokenExceptionWithResourceAndMaxSeenAndIsCountedOnce() {
        assertThat(write(caller, new FencingToken("accounts:42", 34, "new"), "42")).isEqualTo("written");
        double before = rejections(callerMeters, "accounts", "stale");

        Throwable thrown = catchThrowable(() -> write(caller, new FencingToken("accounts:42", 33, "zombie"), "42"));

        assertThat(thrown).isInstanceOfSatisfying(StaleTokenException.class, e -> {
            assertThat(e.resource()).isEqualTo("accounts:42");
            assertThat(e.presented()).isEqualTo(new FencingToken("accounts:42", 33, "zombie"));
            assertThat(e.maxSeen()).isEqualTo(34);
            assertThat(e.verdict()).isEqualTo(Verdict.REJECT_STALE);
            assertThat(e.operation()).isEqualTo("POST " + baseUrl + "/accounts/42/entry (remote)");
            assertThat(e.getMessage()).contains("'accounts:42'").contains(baseUrl + "/accounts/42/entry")
                    .contains("max_seen is 34");
            assertThat(e.getCause()).isInstanceOfSatisfying(HttpClientErrorException.Conflict.class,
                    cause -> assertThat(cause.getResponseBodyAsString()).contains("\"maxSeen\":34"));
        });
        assertThat(caller.get().uri("/accounts/42/entry").retrieve().body(String.class)).isEqualTo("entry 34");
        assertThat(rejections(callerMeters, "accounts", "stale")).isEqualTo(before + 1);
        assertThat(callerMeters.find(FencingTokenClientInterceptor.REMOTE_REJECTIONS).meters())
                .as("the entity key is never a tag")
                .allSatisfy(meter -> assertThat(meter.getId().getTag("resource")).isEqualTo("accounts"));
    }

    @Test
    void anEqualTokenFromAnotherHolderComesBackAsDuplicateTokenException() {
        write(caller, new FencingToken("accounts:43", 5, "first"), "43");
        double before = rejections(callerMeters, "accounts", "duplicate");

        assertThatThrownBy(() -> write(caller, new FencingToken("accounts:43", 5, "second"), "43"))
                .isInstanceOfSatisfying(DuplicateTokenException.class, e -> {
                    assertThat(e.resource()).isEqualTo("accounts:43");
                    assertThat(e.presented().holder()).isEqualTo("second");
                    assertThat(e.maxSeen()).isEqualTo(5);
                });
        assertThat(rejections(callerMeters, "accounts", "duplicate")).isEqualTo(before + 1);
    }

    @Test
    void aTokenTooFarAboveMaxSeenComesBackAsOutOfRangeTokenException() {
        write(caller, new FencingToken("accounts:50", 7, "real"), "50");
        double before = rejections(callerMeters, "accounts", "out-of-range");

        assertThatThrownBy(() -> write(caller, new FencingToken("accounts:50", 7 + MAX_ADVANCE + 1, "evil"), "50"))
                .isInstanceOfSatisfying(OutOfRangeTokenException.class, e -> {
                    assertThat(e.resource()).isEqualTo("accounts:50");
                    assertThat(e.presented()).isEqualTo(new FencingToken("accounts:50", 7 + MAX_ADVANCE + 1, "evil"));
                    assertThat(e.maxSeen()).isEqualTo(7);
                    assertThat(e.verdict()).isEqualTo(Verdict.REJECT_OUT_OF_RANGE);
                    assertThat(e.operation()).isEqualTo("POST " + baseUrl + "/accounts/50/entry (remote)");
                    assertThat(e.getCause()).isInstanceOfSatisfying(HttpClientErrorException.Conflict.class,
                            cause -> assertThat(cause.getResponseBodyAsString()).contains("out-of-range-token"));
                });
        assertThat(caller.get().uri("/accounts/50/entry").retrieve().body(String.class)).isEqualTo("entry 7");
        assertThat(rejections(callerMeters, "accounts", "out-of-range")).isEqualTo(before + 1);
    }

    @Test
    void aMissingTokenComesBackAsMissingTokenException() {
        double before = rejections(callerMeters, "accounts", "missing");

        assertThatThrownBy(() -> caller.post().uri("/accounts/44/entry").contentType(MediaType.TEXT_PLAIN)
                .body("no token").retrieve().body(String.class))
                .isInstanceOfSatisfying(MissingTokenException.class, e -> {
                    assertThat(e.resource()).isEqualTo("accounts:44");
                    assertThat(e.getMessage()).contains("'accounts:44'").contains(baseUrl + "/accounts/44/entry");
                    assertThat(e.getCause()).isInstanceOf(HttpClientErrorException.class);
                });
        assertThat(rejections(callerMeters, "accounts", "missing")).isEqualTo(before + 1);
    }

    @Test
    void unrelatedConflictsPassThroughUntouchedAndUncounted() {
        double counted = callerMeters.find(FencingTokenClientInterceptor.REMOTE_REJECTIONS).counters().stream()
                .mapToDouble(Counter::count).sum();
        try (var ignored = FencingContext.bind(new FencingToken("accounts:45", 1, "a"))) {
            for (String path : List.of("plain-conflict", "other-problem", "untyped-problem")) {
                assertThatThrownBy(() -> caller.post().uri("/accounts/45/" + path).retrieve().body(String.class))
                        .as(path)
                        .isInstanceOfSatisfying(HttpClientErrorException.Conflict.class, e -> assertThat(
                                e.getResponseBodyAsString()).isNotEmpty());
            }
            // the body is still there for the application to read
            String body = caller.post().uri("/accounts/45/other-problem").exchange(
                    (request, response) -> new String(response.getBody().readAllBytes()), true);
            assertThat(body).contains("out-of-stock").contains("\"maxSeen\":2");
        }
        assertThat(callerMeters.find(FencingTokenClientInterceptor.REMOTE_REJECTIONS).counters().stream()
                .mapToDouble(Counter::count).sum()).isEqualTo(counted);
    }

    @Test
    void aSuccessIsUntouched() {
        assertThat(write(caller, new FencingToken("accounts:46", 1, "a"), "46")).isEqualTo("written");
        assertThat(caller.get().uri("/accounts/46/entry").retrieve().body(String.class)).isEqualTo("entry 1");
    }

    @Test
    void restTemplateMapsAndCountsToo() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        RestTemplate template = new RestTemplate();
        template.setInterceptors(List.of(new FencingTokenClientInterceptor().withMeterRegistry(meters)));
        String url = baseUrl + "/accounts/47/entry";
        try (var ignored = FencingContext.bind(new FencingToken("accounts:47", 9, "new"))) {
            assertThat(template.postForObject(url, "entry 9", String.class)).isEqualTo("written");
        }
        try (var ignored = FencingContext.bind(new FencingToken("accounts:47", 8, "zombie"))) {
            assertThatThrownBy(() -> template.postForObject(url, "entry 8", String.class))
                    .isInstanceOfSatisfying(StaleTokenException.class, e -> {
                        assertThat(e.resource()).isEqualTo("accounts:47");
                        assertThat(e.maxSeen()).isEqualTo(9);
                        assertThat(e.presented().value()).isEqualTo(8);
                    });
            assertThatThrownBy(() -> template.postForObject(baseUrl + "/accounts/47/plain-conflict", "x", String.class))
                    .isInstanceOf(HttpClientErrorException.Conflict.class);
        }
        assertThat(template.getForObject(url, String.class)).isEqualTo("entry 9");
        assertThat(rejections(meters, "accounts", "stale")).isEqualTo(1);
        assertThat(meters.find(FencingTokenClientInterceptor.REMOTE_REJECTIONS).meters()).hasSize(1);
    }

    @Test
    void withoutARegistryTheRefusalIsStillMapped() {
        RestClient uncounted = RestClient.builder().baseUrl(baseUrl)
                .requestInterceptor(new FencingTokenClientInterceptor()).build();
        write(uncounted, new FencingToken("accounts:48", 3, "new"), "48");
        assertThatThrownBy(() -> write(uncounted, new FencingToken("accounts:48", 2, "old"), "48"))
                .isInstanceOf(TokenRejectedException.class).isInstanceOf(StaleTokenException.class);
    }

    @Test
    void aFailingMeterNeverBreaksTheCall() {
        SimpleMeterRegistry broken = new SimpleMeterRegistry();
        broken.config().meterFilter(new MeterFilter() {
            @Override
            public Meter.Id map(Meter.Id id) {
                throw new IllegalStateException("meter registry down");
            }
        });
        RestClient client = RestClient.builder().baseUrl(baseUrl)
                .requestInterceptor(new FencingTokenClientInterceptor().withMeterRegistry(broken)).build();
        write(client, new FencingToken("accounts:49", 3, "new"), "49");
        assertThatThrownBy(() -> write(client, new FencingToken("accounts:49", 2, "old"), "49"))
                .isInstanceOf(StaleTokenException.class);
    }

    @Test
    void requestsTheInterceptorDoesNotSendTokensToAreLeftAlone() {
        RestClient elsewhere = RestClient.builder().baseUrl(baseUrl)
                .requestInterceptor(FencingTokenClientInterceptor.forHosts(List.of("ledger.internal"))
                        .withMeterRegistry(callerMeters)).build();
        assertThatThrownBy(() -> elsewhere.post().uri("/accounts/50/entry").contentType(MediaType.TEXT_PLAIN)
                .body("no token").retrieve().body(String.class))
                .isInstanceOfSatisfying(HttpClientErrorException.class,
                        e -> assertThat(e.getStatusCode().value()).isEqualTo(428));
    }
}
