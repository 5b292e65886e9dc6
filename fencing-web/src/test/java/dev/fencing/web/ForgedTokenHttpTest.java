package dev.fencing.web;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.signing.KeyRing;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.VerificationKey;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.util.FileSystemUtils;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.context.support.AnnotationConfigWebApplicationContext;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;
import org.springframework.web.servlet.handler.MappedInterceptor;

import java.io.File;
import java.nio.file.Files;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Signed tokens over real HTTP (Tomcat on loopback): a verifying {@link FencingTokenFilter} refuses an unsigned or
 * altered {@code Fencing-Token} with the forged problem before the request runs, the advice answers a
 * {@link ForgedTokenException} from deeper calls the same way, and the client interceptor sends the signed text as is
 * and maps the problem back to a {@link ForgedTokenException}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class ForgedTokenHttpTest {

    static final byte[] SECRET = new byte[32];

    static {
        new SecureRandom().nextBytes(SECRET);
    }

    static final TokenSigner SIGNER = TokenSigner.hmac("k1", SECRET);
    static final TokenVerifier VERIFIER = new TokenVerifier(KeyRing.of(VerificationKey.hmac("k1", SECRET)));
    static final MeterRegistry FILTER_METERS = new SimpleMeterRegistry();
    static final MeterRegistry CALLER_METERS = new SimpleMeterRegistry();
    static final AtomicInteger RAN = new AtomicInteger();
    static final List<TokenRejectedException> TOLD = new CopyOnWriteArrayList<>();

    public static class Ledger {
        @Fenced(resource = "accounts", key = "#account")
        public void deposit(String account) {
            RAN.incrementAndGet();
        }
    }

    @RestController
    public static class LedgerController {
        private final Ledger ledger;

        public LedgerController(Ledger ledger) {
            this.ledger = ledger;
        }

        /** Behind the verifying filter. */
        @PostMapping("/accounts/{account}/deposit")
        public String deposit(@PathVariable("account") String account) {
            ledger.deposit(account);
            return "deposited";
        }

        /** Behind a filter that does not verify: the guard's verifier refuses, the advice answers. */
        @PostMapping("/unverified/{account}/deposit")
        public String depositUnverified(@PathVariable("account") String account) {
            ledger.deposit(account);
            return "deposited";
        }

        /** What the caller sent, as the server read it. */
        @GetMapping("/echo")
        public String echo(@RequestHeader(FencingHeader.NAME) String header) {
            return header;
        }
    }

    @Configuration
    @EnableWebMvc
    @EnableFencing
    @Import({FencingExceptionAdvice.class, LedgerController.class})
    static class Service {
        /** Refuses a header on a path no filter covers, as the startup check requires (the docs' plain setup). */
        @Bean
        MappedInterceptor unadmittedTokenInterceptor() {
            return new MappedInterceptor(null, new UnadmittedTokenInterceptor(
                    "this service accepts it only on /accounts/*, /echo, /unverified/*",
                    java.util.List.of("/accounts/*", "/echo", "/unverified/*")));
        }

        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        TokenVerifier tokenVerifier() {
            return VERIFIER;
        }

        @Bean
        Ledger ledger() {
            return new Ledger();
        }
    }

    private Tomcat tomcat;
    private File base;
    private AnnotationConfigWebApplicationContext service;
    private RestClient http;
    private RestClient intercepted;

    @BeforeAll
    void start() throws Exception {
        base = Files.createTempDirectory("fencing-tomcat").toFile();
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
        addFilter(context, "verifying", new FencingTokenFilter().verifying(VERIFIER).withMeterRegistry(FILTER_METERS)
                .withRejectionListener(TOLD::add),
                "/accounts/*", "/echo");
        addFilter(context, "plain", new FencingTokenFilter(), "/unverified/*");
        tomcat.start();
        String baseUrl = "http://127.0.0.1:" + tomcat.getConnector().getLocalPort();
        http = RestClient.create(baseUrl);
        intercepted = RestClient.builder().baseUrl(baseUrl)
                .requestInterceptor(new FencingTokenClientInterceptor().withMeterRegistry(CALLER_METERS)).build();
    }

    private static void addFilter(Context context, String name, FencingTokenFilter filter, String... patterns) {
        FilterDef definition = new FilterDef();
        definition.setFilterName(name);
        definition.setFilter(filter);
        context.addFilterDef(definition);
        FilterMap mapping = new FilterMap();
        mapping.setFilterName(name);
        for (String pattern : patterns) {
            mapping.addURLPattern(pattern);
        }
        context.addFilterMap(mapping);
    }

    @AfterAll
    void stop() throws Exception {
        try {
            tomcat.stop();
            tomcat.destroy();
        } finally {
            FileSystemUtils.deleteRecursively(base);
        }
    }

    @BeforeEach
    void reset() {
        RAN.set(0);
        TOLD.clear();
    }

    private ResponseEntity<Map<String, Object>> post(String path, String header) {
        return http.post().uri(path).header(FencingHeader.NAME, header)
                .exchange((request, response) -> ResponseEntity.status(response.getStatusCode())
                        .headers(response.getHeaders())
                        .body(response.getHeaders().getContentType() != null
                                && MediaType.APPLICATION_PROBLEM_JSON.isCompatibleWith(
                                        response.getHeaders().getContentType())
                                ? response.bodyTo(new ParameterizedTypeReference<Map<String, Object>>() {
                                })
                                : Map.of("text", response.bodyTo(String.class))));
    }

    private static double forgedCount() {
        var counter = FILTER_METERS.find("fencing.checks").tag("resource", "accounts").tag("outcome", "forged")
                .counter();
        return counter == null ? 0 : counter.count();
    }

    private InMemoryFenceStore store() {
        return service.getBean(InMemoryFenceStore.class);
    }

    private static void assertForgedProblem(ResponseEntity<Map<String, Object>> answer, String resource,
                                            FencingToken presented) {
        assertThat(answer.getStatusCode().value()).isEqualTo(403);
        assertThat(answer.getHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
        assertThat(answer.getBody()).containsEntry("type", FencingExceptionAdvice.FORGED_TOKEN_TYPE.toString())
                .containsEntry("title", "Forged fencing token").containsEntry("status", 403)
                .containsEntry("resource", resource).containsEntry("presented", presented.unsigned().toText())
                .containsEntry("verdict", "forged");
        String detail = (String) answer.getBody().get("detail");
        assertThat(detail).contains(resource).doesNotContain("k1")
                .doesNotContain(Base64.getEncoder().encodeToString(SECRET));
    }

    @Test
    void theForgedMaxValueHeaderIsRefusedBeforeTheRequestRunsAndTheNextSignedHolderIsAccepted() {
        FencingToken forged = FencingToken.parse("accounts:3#9223372036854775807@evil");
        double counted = forgedCount();

        assertForgedProblem(post("/accounts/3/deposit", forged.toText()), "accounts:3", forged);
        assertThat(RAN).as("the request did not run").hasValue(0);
        assertThat(store().maxSeen("accounts:3")).as("max_seen untouched").isEmpty();
        assertThat(forgedCount()).as("counted as forged").isEqualTo(counted + 1);
        assertThat(TOLD).singleElement().isInstanceOfSatisfying(ForgedTokenException.class, e -> {
            assertThat(e.resource()).isEqualTo("accounts:3");
            assertThat(e.presented()).isEqualTo(forged);
            assertThat(e.maxSeen()).isEqualTo(ForgedTokenException.NOT_CONSULTED);
            assertThat(e.operation()).isEqualTo("POST /accounts/3/deposit (Fencing-Token header)");
            assertThat(e.reason()).contains("unsigned");
        });

        FencingToken real = SIGNER.sign(new FencingToken("accounts:3", 1, "holder-1"));
        ResponseEntity<Map<String, Object>> accepted = post("/accounts/3/deposit", real.toText());
        assertThat(accepted.getStatusCode().value()).isEqualTo(200);
        assertThat(RAN).hasValue(1);
        assertThat(store().maxSeen("accounts:3")).hasValue(1);
    }

    @Test
    void aTokenSignedForOneAccountIsRefusedForAnotherAndSoIsAnyAlteredByte() {
        FencingToken signed = SIGNER.sign(new FencingToken("accounts:1", 5, "holder-1"));
        String replayed = signed.toText().replaceFirst("^accounts:1#", "accounts:2#");
        assertForgedProblem(post("/accounts/2/deposit", replayed), "accounts:2", FencingToken.parse(replayed));

        String raised = signed.toText().replaceFirst("#5@", "#6@");
        assertForgedProblem(post("/accounts/1/deposit", raised), "accounts:1", FencingToken.parse(raised));
        assertThat(RAN).hasValue(0);
        assertThat(store().maxSeen("accounts:1")).isEmpty();
        assertThat(store().maxSeen("accounts:2")).isEmpty();
    }

    @Test
    void behindAFilterThatDoesNotVerifyTheGuardRefusesAndTheAdviceAnswersTheSameProblem() {
        FencingToken forged = new FencingToken("accounts:4", Long.MAX_VALUE, "evil");
        assertForgedProblem(post("/unverified/4/deposit", forged.toText()), "accounts:4", forged);
        assertThat(RAN).hasValue(0);
        assertThat(store().maxSeen("accounts:4")).isEmpty();
    }

    @Test
    void theClientSendsTheSignedTextAsIsAndMapsTheForgedProblemToForgedTokenException() {
        FencingToken signed = SIGNER.sign(new FencingToken("accounts:5", 9, "holder-5"));
        try (FencingScope ignored = FencingContext.bind(signed)) {
            assertThat(intercepted.get().uri("/echo").retrieve().body(String.class)).isEqualTo(signed.toText());
        }

        FencingToken unsigned = new FencingToken("accounts:5", 10, "holder-5");
        try (FencingScope ignored = FencingContext.bind(unsigned)) {
            assertThatThrownBy(() -> intercepted.post().uri("/accounts/5/deposit").retrieve().toBodilessEntity())
                    .isInstanceOfSatisfying(ForgedTokenException.class, e -> {
                        assertThat(e.resource()).isEqualTo("accounts:5");
                        assertThat(e.presented()).isEqualTo(unsigned);
                        assertThat(e.operation()).contains("/accounts/5/deposit").contains("(remote)");
                    });
        }
        assertThat(RAN).hasValue(0);
        assertThat(store().maxSeen("accounts:5")).isEmpty();
        assertThat(CALLER_METERS.get(FencingTokenClientInterceptor.REMOTE_REJECTIONS).tag("resource", "accounts")
                .tag("outcome", "forged").counter().count()).as("counted on the caller's side").isEqualTo(1.0);
    }

    @Test
    void aRequestWithSeveralTokensIsRefusedWhenAnyOfThemIsForged() {
        FencingToken good = SIGNER.sign(new FencingToken("accounts:6", 1, "holder-6"));
        FencingToken bad = new FencingToken("orders:6", 1, "holder-6");
        assertForgedProblem(post("/accounts/6/deposit", FencingHeader.format(List.of(good, bad))), "orders:6", bad);
        assertThat(RAN).hasValue(0);
    }
}
