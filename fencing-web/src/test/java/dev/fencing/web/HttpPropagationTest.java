package dev.fencing.web;

import dev.fencing.annotation.Fenced;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.RestClient;
import org.springframework.web.context.support.AnnotationConfigWebApplicationContext;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;

import java.io.File;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Over real HTTP on loopback: service A acquires a token and calls service B, whose fenced repository checks it.
 * A zombie A (older token) gets its write rejected by B, and B's counters show it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpPropagationTest {

    // ---- service B: a web application whose repository is fenced ----

    public static class NotesRepository {
        final Map<String, String> notes = new ConcurrentHashMap<>();

        @Fenced(resource = "accounts", key = "#account")
        public void write(String account, String note) {
            notes.put(account, note);
        }

        public String read(String account) {
            return notes.getOrDefault(account, "");
        }
    }

    @RestController
    public static class NotesController {
        private final NotesRepository repository;

        public NotesController(NotesRepository repository) {
            this.repository = repository;
        }

        @PostMapping("/accounts/{account}/note")
        public String write(@PathVariable("account") String account, @RequestBody String note) {
            repository.write(account, note);
            return "written";
        }

        @GetMapping("/accounts/{account}/note")
        public String read(@PathVariable("account") String account) {
            return repository.read(account);
        }
    }

    @Configuration
    @EnableWebMvc
    @EnableFencing(proxyTargetClass = true)
    @Import(FencingExceptionAdvice.class)
    static class ServiceB {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        NotesRepository notesRepository() {
            return new NotesRepository();
        }

        @Bean
        NotesController notesController(NotesRepository repository) {
            return new NotesController(repository);
        }
    }

    // ---- service A: acquires the lock and calls B ----

    public static class Writer {
        private final RestClient serviceB;

        public Writer(RestClient serviceB) {
            this.serviceB = serviceB;
        }

        @Fenced(resource = "accounts", key = "#account", acquire = true)
        public String write(String account, String note, Runnable pause) {
            pause.run();
            return serviceB.post().uri("/accounts/{account}/note", account).body(note).retrieve().body(String.class);
        }
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true) // only acquires: every check happens in service B
    static class ServiceA {
        static String baseUrl;

        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer(Duration.ofMillis(300), 32);
        }

        @Bean
        Writer writer() {
            return new Writer(RestClient.builder().baseUrl(baseUrl)
                    .requestInterceptor(new FencingTokenClientInterceptor()).build());
        }
    }

    private Tomcat tomcat;
    private AnnotationConfigWebApplicationContext serviceB;
    private AnnotationConfigApplicationContext serviceA;
    private RestClient plain;

    @BeforeAll
    void start() throws Exception {
        File base = Files.createTempDirectory("fencing-tomcat").toFile();
        tomcat = new Tomcat();
        tomcat.setBaseDir(base.getAbsolutePath());
        tomcat.setHostname("127.0.0.1");
        tomcat.setPort(0);
        tomcat.getConnector().setProperty("address", "127.0.0.1");
        Context context = tomcat.addContext("", base.getAbsolutePath());
        serviceB = new AnnotationConfigWebApplicationContext();
        serviceB.register(ServiceB.class);
        Tomcat.addServlet(context, "dispatcher", new DispatcherServlet(serviceB)).setLoadOnStartup(1);
        context.addServletMappingDecoded("/", "dispatcher");
        FilterDef filter = new FilterDef();
        filter.setFilterName("fencing");
        filter.setFilter(new FencingTokenFilter());
        context.addFilterDef(filter);
        FilterMap mapping = new FilterMap();
        mapping.setFilterName("fencing");
        mapping.addURLPattern("/*");
        context.addFilterMap(mapping);
        tomcat.start();
        String baseUrl = "http://127.0.0.1:" + tomcat.getConnector().getLocalPort();
        ServiceA.baseUrl = baseUrl;
        serviceA = new AnnotationConfigApplicationContext(ServiceA.class);
        plain = RestClient.builder().baseUrl(baseUrl).build();
    }

    @AfterAll
    void stop() throws Exception {
        serviceA.close();
        tomcat.stop();
        tomcat.destroy();
    }

    private double checksOnB(String outcome) {
        var counter = serviceB.getBean(MeterRegistry.class).find("fencing.checks")
                .tag("resource", "accounts").tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void theZombieCallerIsRejectedByTheRemoteService() throws Exception {
        Writer writer = serviceA.getBean(Writer.class);
        CountDownLatch acquired = new CountDownLatch(1);
        CountDownLatch wake = new CountDownLatch(1);
        CompletableFuture<Throwable> zombie = CompletableFuture.supplyAsync(() -> {
            try {
                writer.write("42", "Y", () -> {     // A acquires 33, then pauses past its lease
                    acquired.countDown();
                    try {
                        wake.await();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        assertThat(acquired.await(10, TimeUnit.SECONDS)).isTrue();
        double acceptedBefore = checksOnB("accepted");
        assertThat(writer.write("42", "X", () -> { })).isEqualTo("written"); // another A instance: 34, accepted
        wake.countDown();

        assertThat(zombie.get(10, TimeUnit.SECONDS)).isInstanceOfSatisfying(HttpClientErrorException.Conflict.class,
                e -> assertThat(e.getResponseBodyAsString()).contains("\"maxSeen\":34").contains("accounts:42#33"));
        assertThat(plain.get().uri("/accounts/42/note").retrieve().body(String.class)).isEqualTo("X");
        assertThat(checksOnB("accepted")).isEqualTo(acceptedBefore + 1);
        assertThat(checksOnB("stale")).isEqualTo(1);
    }

    @Test
    void aRequestWithoutTheHeaderIsRefusedAsMissing() {
        assertThatThrownBy(() -> plain.post().uri("/accounts/7/note").body("no token").retrieve().body(String.class))
                .isInstanceOfSatisfying(HttpClientErrorException.class,
                        e -> assertThat(e.getStatusCode().value()).isEqualTo(428));
        assertThat(plain.get().uri("/accounts/7/note").retrieve().body(String.class)).isNullOrEmpty();
    }

    @Test
    void aMalformedHeaderIsABadRequest() {
        assertThatThrownBy(() -> plain.post().uri("/accounts/8/note").header(FencingHeader.NAME, "accounts:8#-1@x")
                .body("forged").retrieve().body(String.class))
                .isInstanceOfSatisfying(HttpClientErrorException.BadRequest.class,
                        e -> assertThat(e.getStatusCode().value()).isEqualTo(400));
        assertThat(plain.get().uri("/accounts/8/note").retrieve().body(String.class)).isNullOrEmpty();
    }
}
