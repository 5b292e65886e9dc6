package dev.fencing.web;

import dev.fencing.annotation.Fenced;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.TokenFormatException;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.store.TransientFenceFailure;
import org.springframework.core.annotation.Order;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FenceStoreException;
import dev.fencing.store.FencedCall;
import dev.fencing.store.RoutingFenceStore;
import dev.fencing.token.FencingToken;
import dev.fencing.web.internal.FencingProblems;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.catalina.LifecycleState;
import org.springframework.core.task.support.ContextPropagatingTaskDecorator;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import org.springframework.web.filter.DelegatingFilterProxy;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
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
import org.springframework.web.servlet.handler.MappedInterceptor;

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
import static org.assertj.core.api.Assertions.catchThrowable;

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

        /** A key that cannot be computed for short accounts: 400. */
        @Fenced(resource = "accounts", key = "#account.substring(10)")
        public void writeBadKey(String account, String note) {
            notes.put(account, note);
        }

        /** Routed to a store that cannot decide: 503. */
        @Fenced(resource = "broken", key = "#account")
        public void writeBroken(String account, String note) {
            notes.put("broken:" + account, note);
        }
    }

    /** B's own critical section: acquires the lock of the account, then writes through the checked repository. */
    public static class Transfers {
        private final NotesRepository repository;

        public Transfers(NotesRepository repository) {
            this.repository = repository;
        }

        @Fenced(resource = "accounts", key = "#account", acquire = true)
        public String transfer(String account, String note) {
            repository.write(account, note);
            return "transferred under " + FencingContext.current("accounts:" + account).toText();
        }
    }

    /** The same critical section, entered from an {@code @Async} thread that the request's context propagates to. */
    public static class AsyncTransfers {
        private final Transfers transfers;

        public AsyncTransfers(Transfers transfers) {
            this.transfers = transfers;
        }

        @Async
        public CompletableFuture<String> transfer(String account, String note) {
            boolean propagated = FencingContext.current("accounts:" + account) != null;
            return CompletableFuture.completedFuture(transfers.transfer(account, note) + " propagated=" + propagated);
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

        /** Outside the filter's patterns: the service's own lock's token, refused as stale. */
        @PostMapping("/uncovered/{account}/stale")
        public String staleOwnToken(@PathVariable("account") String account) {
            throw new StaleTokenException("accounts:" + account, new FencingToken("accounts:" + account, 3,
                    "host-7/lease-42"), 9, "NotesService.write(String)");
        }

        /**
         * On a covered path, the service's own lock's token for another resource than the caller's, refused: the
         * caller's token is not the one refused, the service's is.
         */
        @PostMapping("/accounts/{account}/own-ledger-stale")
        public String staleOwnLedgerToken(@PathVariable("account") String account) {
            throw new StaleTokenException("ledger", new FencingToken("ledger", 3, "host-7/lease-42"), 9,
                    "LedgerService.append(String)");
        }

        /** Outside the filter's patterns: a Fencing-Token header sent here is never read. */
        @PostMapping("/uncovered/{account}/note")
        public String writeUncovered(@PathVariable("account") String account, @RequestBody String note) {
            repository.write(account, note);
            return "written";
        }

        /** The write on a thread the caller's token was not propagated to. */
        @PostMapping("/accounts/{account}/note-on-another-thread")
        public String writeOnAnotherThread(@PathVariable("account") String account, @RequestBody String note)
                throws Throwable {
            try {
                java.util.concurrent.CompletableFuture.runAsync(() -> repository.write(account, note)).join();
            } catch (java.util.concurrent.CompletionException e) {
                throw e.getCause();
            }
            return "written";
        }

        @GetMapping("/accounts/{account}/note")
        public String read(@PathVariable("account") String account) {
            return repository.read(account);
        }

        @PostMapping("/accounts/{account}/bad-key-note")
        public String writeBadKey(@PathVariable("account") String account, @RequestBody String note) {
            repository.writeBadKey(account, note);
            return "written";
        }

        @PostMapping("/broken/{account}/note")
        public String writeBroken(@PathVariable("account") String account, @RequestBody String note) {
            repository.writeBroken(account, note);
            return "written";
        }
    }

    @RestController
    public static class TransfersController {
        private final Transfers transfers;
        private final AsyncTransfers asyncTransfers;

        public TransfersController(Transfers transfers, AsyncTransfers asyncTransfers) {
            this.transfers = transfers;
            this.asyncTransfers = asyncTransfers;
        }

        @PostMapping("/accounts/{account}/transfer")
        public String transfer(@PathVariable("account") String account, @RequestBody String note) {
            return transfers.transfer(account, note);
        }

        @PostMapping("/accounts/{account}/transfer-async")
        public String transferAsync(@PathVariable("account") String account, @RequestBody String note)
                throws Exception {
            return asyncTransfers.transfer(account, note).get(10, TimeUnit.SECONDS);
        }
    }

    /** Stands in for the JDBC store's FenceBusyException (fencing-jdbc is not a dependency of this module). */
    static class TestFenceBusy extends CannotAcquireLockException implements TransientFenceFailure {
        private final String resource;
        private final FencingToken presented;

        TestFenceBusy(String resource, FencingToken presented) {
            super("Fence row of '" + resource + "' stayed locked past the lock wait bound");
            this.resource = resource;
            this.presented = presented;
        }

        @Override
        public Reason reason() {
            return Reason.BUSY;
        }

        @Override
        public String resource() {
            return resource;
        }

        @Override
        public FencingToken presented() {
            return presented;
        }
    }

    /** Stands in for the JDBC store's FenceConflictException. */
    static class TestFenceConflict extends ConcurrencyFailureException implements TransientFenceFailure {
        private final String resource;

        TestFenceConflict(String resource) {
            super("Fence check of '" + resource + "' was aborted as a serialization failure");
            this.resource = resource;
        }

        @Override
        public Reason reason() {
            return Reason.CONFLICT;
        }

        @Override
        public String resource() {
            return resource;
        }

        @Override
        public FencingToken presented() {
            return null;
        }
    }

    /** The application's own concurrency failure, which Spring answers through its @ResponseStatus. */
    @ResponseStatus(HttpStatus.LOCKED)
    static class AppLockedException extends ConcurrencyFailureException {
        AppLockedException() {
            super("the application's own optimistic locking failure");
        }
    }

    /** A busy fence the application's own advice answers. */
    static class AppOwnedBusy extends TestFenceBusy {
        AppOwnedBusy(String resource) {
            super(resource, null);
        }
    }

    /** The application's own advice, ordered: it wins over FencingExceptionAdvice for what it handles. */
    @RestControllerAdvice
    @Order(0)
    static class AppAdvice {
        @ExceptionHandler(AppOwnedBusy.class)
        ResponseEntity<String> appOwned(AppOwnedBusy e) {
            return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS).body("app says later");
        }
    }

    /** Failures that pass: the lock, the fence row, the database's conflict; and the application's own. */
    @RestController
    public static class RetryController {
        @PostMapping("/accounts/{account}/lock-timeout")
        public String lockTimeout(@PathVariable("account") String account) {
            throw new LockAcquisitionException("accounts:" + account,
                    "Lock of 'accounts:" + account + "' not acquired within 250ms");
        }

        @PostMapping({"/accounts/{account}/busy", "/uncovered/{account}/busy"})
        public String busy(@PathVariable("account") String account) {
            throw new TestFenceBusy("accounts:" + account, FencingToken.parse("accounts:" + account + "#7@h"));
        }

        @PostMapping("/accounts/{account}/conflict")
        public String conflict(@PathVariable("account") String account) {
            throw new TestFenceConflict("accounts:" + account);
        }

        @PostMapping("/accounts/{account}/app-concurrency")
        public String appConcurrency(@PathVariable("account") String account) {
            throw new ConcurrencyFailureException("not a fence: the application's own");
        }

        @PostMapping("/accounts/{account}/app-locked")
        public String appLocked(@PathVariable("account") String account) {
            throw new AppLockedException();
        }

        @PostMapping("/accounts/{account}/app-owned")
        public String appOwned(@PathVariable("account") String account) {
            throw new AppOwnedBusy("accounts:" + account);
        }
    }

    /** A store that cannot reach a verdict. */
    static class UnreachableStore implements FenceStore {
        @Override
        public <T> T fence(String resource, FencingToken token, FencedCall<T> write) {
            throw new FenceStoreException(resource, token, "Fence store for '" + resource + "' is unreachable", null);
        }
    }

    @Configuration
    @EnableWebMvc
    @EnableAsync
    @EnableFencing(proxyTargetClass = true)
    @Import({FencingExceptionAdvice.class, AppAdvice.class, RetryController.class})
    static class ServiceB {
        /** Refuses a header on a path no filter covers, as the startup check requires (the docs' plain setup). */
        @Bean
        MappedInterceptor unadmittedTokenInterceptor() {
            return new MappedInterceptor(null, new UnadmittedTokenInterceptor(
                    "this service accepts it only on /accounts/*, /broken/*",
                    java.util.List.of("/accounts/*", "/broken/*")));
        }

        static final InMemoryFenceStore MEMORY = new InMemoryFenceStore();

        @Bean
        FenceStore fenceStore() {
            return RoutingFenceStore.builder().route("broken", new UnreachableStore()).fallback(MEMORY).build();
        }

        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }

        @Bean
        ThreadPoolTaskExecutor taskExecutor() {
            ThreadPoolTaskExecutor executor = new ThreadPoolTaskExecutor();
            executor.setCorePoolSize(1);
            executor.setThreadNamePrefix("b-async-");
            executor.setTaskDecorator(new ContextPropagatingTaskDecorator());
            return executor;
        }

        @Bean
        Transfers transfers(NotesRepository repository) {
            return new Transfers(repository);
        }

        @Bean
        AsyncTransfers asyncTransfers(Transfers transfers) {
            return new AsyncTransfers(transfers);
        }

        @Bean
        TransfersController transfersController(Transfers transfers, AsyncTransfers asyncTransfers) {
            return new TransfersController(transfers, asyncTransfers);
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
        mapping.addURLPattern("/accounts/*");   // explicit service-to-service paths: no predicate needed
        mapping.addURLPattern("/broken/*");
        context.addFilterMap(mapping);
        addTrustedContext(tomcat, base);
        tomcat.start();
        assertThat(context.getState()).isEqualTo(LifecycleState.STARTED);
        String baseUrl = "http://127.0.0.1:" + tomcat.getConnector().getLocalPort();
        ServiceA.baseUrl = baseUrl;
        serviceA = new AnnotationConfigApplicationContext(ServiceA.class);
        plain = RestClient.builder().baseUrl(baseUrl).build();
    }

    /** Reports what a request sees; counts the requests that reached it. */
    static class ProbeServlet extends HttpServlet {
        static final AtomicInteger RAN = new AtomicInteger();

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            RAN.incrementAndGet();
            FencingToken current = FencingContext.current("accounts:5");
            FencingToken local = FencingContext.currentLocal("accounts:5");
            response.setContentType("text/plain");
            response.getWriter().write("current=" + current + " local=" + local
                    + (request.getParameter("applied") == null ? ""
                    : " applied=" + (request.getAttribute(FencingTokenFilter.APPLIED_ATTRIBUTE) != null)));
        }
    }

    /** A second application on the same server: the filter on every path, with a trust predicate. */
    private static void addTrustedContext(Tomcat tomcat, File base) {
        Context trusted = tomcat.addContext("/trusted", base.getAbsolutePath());
        Tomcat.addServlet(trusted, "probe", new ProbeServlet());
        trusted.addServletMappingDecoded("/", "probe");
        FilterDef filter = new FilterDef();
        filter.setFilterName("fencing");
        filter.setFilter(new FencingTokenFilter(request -> "s3cret".equals(request.getHeader("X-Service-Auth"))));
        trusted.addFilterDef(filter);
        FilterMap everything = new FilterMap();
        everything.setFilterName("fencing");
        everything.addURLPattern("/*");
        trusted.addFilterMap(everything);

        // a filter the container never initializes (DelegatingFilterProxy does not pass init on to an instance)
        Context proxied = tomcat.addContext("/proxied", base.getAbsolutePath());
        Tomcat.addServlet(proxied, "probe", new ProbeServlet());
        proxied.addServletMappingDecoded("/", "probe");
        FilterDef proxy = new FilterDef();
        proxy.setFilterName("fencing");
        proxy.setFilter(new DelegatingFilterProxy(new FencingTokenFilter()));
        proxied.addFilterDef(proxy);
        FilterMap internal = new FilterMap();
        internal.setFilterName("fencing");
        internal.addURLPattern("/internal/*");
        proxied.addFilterMap(internal);
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
        double staleBefore = checksOnB("stale");
        assertThat(writer.write("42", "X", () -> { })).isEqualTo("written"); // another A instance: 34, accepted
        wake.countDown();

        // the caller's interceptor turns B's 409 into the library's exception, B's answer kept as its cause
        assertThat(zombie.get(10, TimeUnit.SECONDS)).isInstanceOfSatisfying(StaleTokenException.class, e -> {
            assertThat(e.resource()).isEqualTo("accounts:42");
            assertThat(e.presented().value()).isEqualTo(33);
            assertThat(e.maxSeen()).isEqualTo(34);
            assertThat(e.getCause()).isInstanceOfSatisfying(HttpClientErrorException.Conflict.class,
                    c -> assertThat(c.getResponseBodyAsString()).contains("\"maxSeen\":34").contains("accounts:42#33"));
        });
        assertThat(plain.get().uri("/accounts/42/note").retrieve().body(String.class)).isEqualTo("X");
        assertThat(checksOnB("accepted")).isEqualTo(acceptedBefore + 1);
        assertThat(checksOnB("stale")).isEqualTo(staleBefore + 1);
    }

    @Test
    void aRequestWithoutTheHeaderIsRefusedAsMissing() {
        assertThatThrownBy(() -> plain.post().uri("/accounts/7/note").body("no token").retrieve().body(String.class))
                .isInstanceOfSatisfying(HttpClientErrorException.class,
                        e -> assertThat(e.getStatusCode().value()).isEqualTo(428));
        assertThat(plain.get().uri("/accounts/7/note").retrieve().body(String.class)).isNullOrEmpty();
    }

    @Test
    void aMalformedHeaderIsABadRequestSayingWhatIsWrong() throws Exception {
        JsonNode problem = problem(exchange(plain, "POST", "/accounts/8/note",
                Map.of(FencingHeader.NAME, "accounts:8#-1@x", "Content-Type", "text/plain")), 400);
        assertThat(problem.get("title").asString()).isEqualTo("Malformed fencing token header");
        assertThat(problem.get("type").asString()).isEqualTo(FencingTokenFilter.MALFORMED_TOKEN_TYPE);
        assertThat(problem.get("detail").asString()).contains("Malformed fencing token").contains("accounts:8#-1@x");
        assertThat(plain.get().uri("/accounts/8/note").retrieve().body(String.class)).isNullOrEmpty();
    }

    @Test
    void twoEntriesForOneResourceAreABadRequestNamingTheResource() throws Exception {
        JsonNode problem = problem(exchange(plain, "POST", "/accounts/9/note",
                Map.of(FencingHeader.NAME, "accounts:9#1@a, accounts:9#2@b", "Content-Type", "text/plain")), 400);
        assertThat(problem.get("title").asString()).isEqualTo("Malformed fencing token header");
        assertThat(problem.get("detail").asString()).isEqualTo(
                FencingHeader.NAME + " header has two entries for resource 'accounts:9'");
        assertThat(plain.get().uri("/accounts/9/note").retrieve().body(String.class)).isNullOrEmpty();
    }

    /**
     * Two Fencing-Token header fields (a proxy that adds its own, a client that appends instead of replacing) are
     * read together: two entries for one resource are a 400 naming it and nothing is written, whichever field comes
     * first; a lower-case name is the same header.
     */
    @Test
    void severalHeaderFieldsAreReadTogetherAndTwoForOneResourceAreABadRequest() throws Exception {
        for (List<String> fields : List.of(List.of("accounts:25#5@new", "accounts:25#4@old"),
                List.of("accounts:25#4@old", "accounts:25#5@new"))) {
            int status = plain.post().uri("/accounts/25/note").headers(h -> fields.forEach(
                            field -> h.add("fencing-token", field)))
                    .body("two fields").exchange((request, response) -> response.getStatusCode().value());
            assertThat(status).as("fields %s", fields).isEqualTo(400);
        }
        assertThat(plain.get().uri("/accounts/25/note").retrieve().body(String.class)).isNullOrEmpty();

        int status = plain.post().uri("/accounts/25/note").headers(h -> {
            h.add(FencingHeader.NAME, "ledger#1@a");
            h.add("fencing-token", "accounts:25#5@new");
        }).body("one field each").exchange((request, response) -> response.getStatusCode().value());
        assertThat(status).isEqualTo(200);
        assertThat(plain.get().uri("/accounts/25/note").retrieve().body(String.class)).isEqualTo("one field each");
    }

    @Test
    void theDetailOfAMalformedHeaderIsCappedAndStaysValidJson() throws Exception {
        // quotes, a backslash and a control character, then a resource longer than a token allows
        String garbage = "q\"\\\t" + "x".repeat(400) + "#1@h";
        Throwable parsed = catchThrowable(() -> FencingHeader.parse(List.of(garbage)));
        assertThat(parsed).isInstanceOf(TokenFormatException.class);
        String message = parsed.getMessage();
        assertThat(message.length()).as("the parser's own message is longer than the cap").isGreaterThan(256);

        JsonNode problem = problem(exchange(plain, "POST", "/accounts/10/note",
                Map.of(FencingHeader.NAME, garbage, "Content-Type", "text/plain")), 400);
        assertThat(problem.get("title").asString()).isEqualTo("Malformed fencing token header");
        assertThat(problem.get("detail").asString()).isEqualTo(message.substring(0, 256) + "...");
    }

    // ---- a token from a header never opens a critical section (issue 10, item 6) ----

    private double acquisitionsOnB(String outcome) {
        var counter = serviceB.getBean(MeterRegistry.class).find("fencing.acquisitions")
                .tag("resource", "accounts").tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    private static final String EVIL = "accounts:3#1000000@evil";

    @Test
    void aHeaderTokenIsNeverSetAsideByAnAcquiringMethod() {
        double acquiredBefore = acquisitionsOnB("acquired");
        double acceptedBefore = checksOnB("accepted");
        var before = ServiceB.MEMORY.maxSeen("accounts:3");
        Answer answer = exchange(plain, "POST", "/accounts/3/transfer", Map.of(FencingHeader.NAME, EVIL));

        // taking B's own lock would fence the write with a fresh token and land a stale caller's request: refused
        assertThat(answer.status()).isEqualTo(409);
        assertThat(answer.body()).contains("Fencing token sent to a method that acquires its own lock")
                .contains("remove acquire = true").contains("\"presentedValue\":1000000")
                .contains(FencingExceptionAdvice.REMOTE_TOKEN_SET_ASIDE_TYPE.toString());
        assertThat(acquisitionsOnB("acquired")).as("no lock taken").isEqualTo(acquiredBefore);
        assertThat(checksOnB("accepted")).as("nothing checked or written").isEqualTo(acceptedBefore);
        assertThat(ServiceB.MEMORY.maxSeen("accounts:3")).as("max_seen untouched").isEqualTo(before);

        // and the account stays writable by the next legitimate holder, who sends no token
        assertThat(plain.post().uri("/accounts/3/transfer").body("legit").retrieve().body(String.class))
                .startsWith("transferred under accounts:3#");
        assertThat(plain.get().uri("/accounts/3/note").retrieve().body(String.class)).isEqualTo("legit");
        assertThat(ServiceB.MEMORY.maxSeen("accounts:3").orElseThrow()).isLessThan(1_000_000);
    }

    @Test
    void aHeaderTokenPropagatedToAnAsyncThreadIsNotSetAsideThereEither() {
        double acquiredBefore = acquisitionsOnB("acquired");
        var before = ServiceB.MEMORY.maxSeen("accounts:4");
        Answer answer = exchange(plain, "POST", "/accounts/4/transfer-async",
                Map.of(FencingHeader.NAME, "accounts:4#1000000@evil"));

        assertThat(answer.status()).isEqualTo(409);
        assertThat(answer.body()).contains("accounts:4").doesNotContain("propagated=");
        assertThat(acquisitionsOnB("acquired")).isEqualTo(acquiredBefore);
        assertThat(ServiceB.MEMORY.maxSeen("accounts:4")).isEqualTo(before);
    }

    private record Answer(int status, String contentType, String body, String retryAfter) {
    }

    private Answer exchange(RestClient client, String method, String uri, Map<String, String> headers) {
        return client.method(org.springframework.http.HttpMethod.valueOf(method)).uri(uri)
                .headers(h -> headers.forEach(h::set))
                .body("POST".equals(method) ? "a note" : "")
                .exchange((request, response) -> new Answer(response.getStatusCode().value(),
                        String.valueOf(response.getHeaders().getContentType()),
                        new String(response.getBody().readAllBytes(), StandardCharsets.UTF_8),
                        response.getHeaders().getFirst("Retry-After")), true);
    }

    @Test
    void withATrustPredicateAnUntrustedRequestCarryingTheHeaderIsRefusedBeforeItRuns() throws Exception {
        int ranBefore = ProbeServlet.RAN.get();
        Answer refused = exchange(plain, "GET", "/trusted/probe", Map.of(FencingHeader.NAME, "accounts:5#9@x"));
        assertThat(refused.status()).isEqualTo(403);
        assertThat(refused.contentType()).startsWith("application/problem+json");
        JsonNode problem = JSON.readTree(refused.body());
        assertThat(problem.get("status").asInt()).isEqualTo(403);
        assertThat(problem.get("title").asString()).isEqualTo("Untrusted fencing token");
        assertThat(problem.get("type").asString()).isEqualTo(FencingTokenFilter.UNTRUSTED_TOKEN_TYPE);
        assertThat(problem.get("detail").asString()).contains(FencingHeader.NAME);
        assertThat(ProbeServlet.RAN.get()).as("the request did not run").isEqualTo(ranBefore);

        Answer noHeader = exchange(plain, "GET", "/trusted/probe", Map.of());
        assertThat(noHeader.status()).isEqualTo(200);
        assertThat(noHeader.body()).isEqualTo("current=null local=null");

        Answer trusted = exchange(plain, "GET", "/trusted/probe",
                Map.of(FencingHeader.NAME, "accounts:5#9@x", "X-Service-Auth", "s3cret"));
        assertThat(trusted.status()).isEqualTo(200);
        assertThat(trusted.body()).as("bound for checks, but not as a local lock")
                .isEqualTo("current=accounts:5#9@x local=null");

        // only a request whose caller may send tokens is marked so: a missing token elsewhere is the service's own
        assertThat(exchange(plain, "GET", "/trusted/probe?applied", Map.of()).body()).endsWith("applied=false");
        assertThat(exchange(plain, "GET", "/trusted/probe?applied", Map.of("X-Service-Auth", "s3cret")).body())
                .endsWith("applied=true");
    }

    @Test
    void aFilterWhoseMappingWasNeverCheckedTrustsNobody() throws Exception {
        int ranBefore = ProbeServlet.RAN.get();
        Answer refused = exchange(plain, "GET", "/proxied/internal/probe",
                Map.of(FencingHeader.NAME, "accounts:5#9@x"));
        assertThat(refused.status()).isEqualTo(403);
        assertThat(JSON.readTree(refused.body()).get("detail").asString()).contains("was not initialized")
                .contains("setTargetFilterLifecycle(true)");
        assertThat(ProbeServlet.RAN.get()).isEqualTo(ranBefore);
        assertThat(exchange(plain, "GET", "/proxied/internal/probe", Map.of()).body())
                .isEqualTo("current=null local=null");
    }

    /** Starts one context per mapping on a fresh server and reports which came up, and the errors logged. */
    private static Map<String, LifecycleState> startWithFilterMappings(Map<String, Consumer<Context>> setups,
                                                                       List<Throwable> logged) throws Exception {
        File base = Files.createTempDirectory("fencing-tomcat-refusal").toFile();
        Tomcat server = new Tomcat();
        server.setBaseDir(base.getAbsolutePath());
        server.setHostname("127.0.0.1");
        server.setPort(0);
        server.getConnector().setProperty("address", "127.0.0.1");
        Map<String, Context> contexts = new LinkedHashMap<>();
        setups.forEach((path, setup) -> {
            Context context = server.addContext(path, base.getAbsolutePath());
            Tomcat.addServlet(context, "app", new ProbeServlet());
            context.addServletMappingDecoded("/", "app");
            FilterDef filter = new FilterDef();
            filter.setFilterName("fencing");
            filter.setFilter(new FencingTokenFilter());
            context.addFilterDef(filter);
            setup.accept(context);
            contexts.put(path, context);
        });
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getThrown() != null) {
                    logged.add(record.getThrown());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger root = Logger.getLogger("");
        root.addHandler(capture);
        Map<String, LifecycleState> states = new LinkedHashMap<>();
        try {
            server.start();
            contexts.forEach((path, context) -> states.put(path, context.getState()));
        } finally {
            root.removeHandler(capture);
            server.stop();
            server.destroy();
        }
        return states;
    }

    private static Consumer<Context> urlPatterns(String... patterns) {
        return context -> {
            FilterMap map = new FilterMap();
            map.setFilterName("fencing");
            for (String pattern : patterns) {
                map.addURLPattern(pattern);
            }
            context.addFilterMap(map);
        };
    }

    @Test
    void withoutATrustPredicateAFilterMappedToEverythingRefusesToStart() throws Exception {
        List<Throwable> logged = new CopyOnWriteArrayList<>();
        Map<String, Consumer<Context>> setups = new LinkedHashMap<>();
        setups.put("/star", urlPatterns("/*"));
        setups.put("/slash", urlPatterns("/internal/*", "/"));
        setups.put("/unmapped", context -> { });
        setups.put("/by-servlet", context -> {
            FilterMap map = new FilterMap();
            map.setFilterName("fencing");
            map.addServletName("app");                       // the servlet serves "/": every request
            context.addFilterMap(map);
        });
        setups.put("/internal-only", urlPatterns("/internal/*"));
        setups.put("/with-predicate", context -> {
            context.findFilterDef("fencing").setFilter(new FencingTokenFilter(request -> false));
            urlPatterns("/*").accept(context);
        });

        Map<String, LifecycleState> states = startWithFilterMappings(setups, logged);

        assertThat(states.get("/internal-only")).isEqualTo(LifecycleState.STARTED);
        assertThat(states.get("/with-predicate")).isEqualTo(LifecycleState.STARTED);
        for (String refused : List.of("/star", "/slash", "/unmapped", "/by-servlet")) {
            assertThat(states.get(refused)).as(refused).isNotEqualTo(LifecycleState.STARTED);
        }
        assertThat(logged).extracting(Throwable::getMessage)
                .anySatisfy(m -> assertThat(m).contains("FencingTokenFilter 'fencing' is mapped to '/*'")
                        .contains("addUrlPatterns(\"/internal/*\")").contains("new FencingTokenFilter(request ->"))
                .anySatisfy(m -> assertThat(m).contains("is mapped to '/'"))
                .anySatisfy(m -> assertThat(m).contains("has no explicit URL patterns"))
                .anySatisfy(m -> assertThat(m).contains("servlet 'app'"));
    }

    // ---- FencingExceptionAdvice over HTTP: every answer, status and problem-detail fields (issue 10, item 22) ----

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private JsonNode problem(Answer answer, int status) throws Exception {
        assertThat(answer.status()).as(answer.body()).isEqualTo(status);
        assertThat(answer.contentType()).startsWith("application/problem+json");
        JsonNode problem = JSON.readTree(answer.body());
        assertThat(problem.get("status").asInt()).isEqualTo(status);
        return problem;
    }

    @Test
    void anUncomputableKeyIsABadRequestNamingTheMethod() throws Exception {
        JsonNode problem = problem(exchange(plain, "POST", "/accounts/12/bad-key-note",
                Map.of(FencingHeader.NAME, "accounts:12#1@h", "Content-Type", "text/plain")), 400);
        assertThat(problem.get("title").asString()).isEqualTo("Invalid fencing key");
        assertThat(problem.get("type").asString()).isEqualTo(FencingExceptionAdvice.INVALID_KEY_TYPE.toString());
        assertThat(problem.get("resource").asString()).isEqualTo("accounts");
        assertThat(problem.get("detail").asString()).contains("NotesRepository.writeBadKey(String, String)");
        assertThat(plain.get().uri("/accounts/12/note").retrieve().body(String.class)).isNullOrEmpty();
    }

    @Test
    void aStoreThatCannotDecideIsServiceUnavailable() throws Exception {
        double errorsBefore = serviceB.getBean(MeterRegistry.class).find("fencing.checks").tag("resource", "broken")
                .tag("outcome", "error").counters().stream().mapToDouble(c -> c.count()).sum();
        JsonNode problem = problem(exchange(plain, "POST", "/broken/1/note",
                Map.of(FencingHeader.NAME, "broken:1#1@h", "Content-Type", "text/plain")), 503);
        assertThat(problem.get("title").asString()).isEqualTo("Fence store unavailable");
        assertThat(problem.get("resource").asString()).isEqualTo("broken:1");
        // the store's own message (here "unreachable"; SQL and database errors elsewhere) stays in the server's log
        assertThat(problem.get("detail").asString()).contains("broken:1").doesNotContain("unreachable");
        double errorsAfter = serviceB.getBean(MeterRegistry.class).find("fencing.checks").tag("resource", "broken")
                .tag("outcome", "error").counters().stream().mapToDouble(c -> c.count()).sum();
        assertThat(errorsAfter).isEqualTo(errorsBefore + 1);
    }

    @Test
    void aMissingTokenIsPreconditionRequiredNamingTheResource() throws Exception {
        JsonNode problem = problem(exchange(plain, "POST", "/accounts/13/note", Map.of("Content-Type", "text/plain")),
                428);
        assertThat(problem.get("title").asString()).isEqualTo("Missing fencing token");
        assertThat(problem.get("type").asString()).isEqualTo(FencingExceptionAdvice.MISSING_TOKEN_TYPE.toString());
        assertThat(problem.get("resource").asString()).isEqualTo("accounts:13");
        assertThat(problem.get("detail").asString()).contains("accounts:13").contains("write")
                .doesNotContain("was not read");
    }

    /**
     * The caller sent the token and the service lost it on a thread hop: 500 "Fencing token lost" with an ERROR
     * naming the hop, not 428 telling the caller it sent none (a new user's trial got 428 and no log line).
     */
    @Test
    void aTokenTheCallerSentAndTheServiceLostOnAThreadHopIsTheServicesFault() throws Exception {
        JsonNode problem = problem(exchange(plain, "POST", "/accounts/17/note-on-another-thread",
                Map.of(FencingHeader.NAME, "accounts:17#1@h", "Content-Type", "text/plain")), 500);
        assertThat(problem.get("title").asString()).isEqualTo("Fencing token lost");
        assertThat(problem.get("type").asString()).isEqualTo(FencingExceptionAdvice.LOST_TOKEN_TYPE.toString());
        assertThat(problem.get("detail").asString()).contains("accounts:17")
                .contains("although the request carried one");
        // a token for another resource only: the caller's precondition, 428 as before
        problem(exchange(plain, "POST", "/accounts/18/note-on-another-thread",
                Map.of(FencingHeader.NAME, "accounts:17#1@h", "Content-Type", "text/plain")), 428);
    }

    @Test
    void theServicesOwnStaleTokenOnAPathNoFilterCoversNamesNeitherMethodNorHolder() throws Exception {
        JsonNode problem = problem(exchange(plain, "POST", "/uncovered/23/stale", Map.of("Content-Type", "text/plain")),
                409);
        assertThat(problem.get("title").asString()).isEqualTo("Stale fencing token");
        assertThat(problem.get("resource").asString()).isEqualTo("accounts:23");
        assertThat(problem.get("maxSeen").asLong()).isEqualTo(9);
        assertThat(problem.has("presented")).isFalse();
        assertThat(problem.get("detail").asString()).contains("accounts:23").doesNotContain("NotesService")
                .doesNotContain("host-7");
    }

    /**
     * A caller that sent its token for accounts:24 to a covered path, where the service's own lock's token for ledger
     * was refused: the answer used to show the service's own token (holder id included) as presented, so the
     * caller's interceptor turned it into a StaleTokenException for ledger, as if the caller's own token had been
     * refused, and counted it among its remote rejections. Only a token the caller sent is the caller's.
     */
    @Test
    void theServicesOwnStaleTokenOnACoveredRequestIsNotPresentedAsTheCallers() throws Exception {
        JsonNode problem = problem(exchange(plain, "POST", "/accounts/24/own-ledger-stale",
                Map.of(FencingHeader.NAME, "accounts:24#5@caller", "Content-Type", "text/plain")), 409);
        assertThat(problem.get("type").asString()).isEqualTo(FencingExceptionAdvice.STALE_TOKEN_TYPE.toString());
        assertThat(problem.get("resource").asString()).isEqualTo("ledger");
        assertThat(problem.has("presented")).isFalse();
        assertThat(problem.get("detail").asString()).contains("its own, not the caller's")
                .doesNotContain("LedgerService").doesNotContain("host-7");

        RestClient caller = RestClient.builder().baseUrl(ServiceA.baseUrl)
                .requestInterceptor(new FencingTokenClientInterceptor()).build();
        try (FencingScope ignored = FencingContext.bind(new FencingToken("accounts:24", 5, "caller"))) {
            assertThatThrownBy(() -> caller.post().uri("/accounts/24/own-ledger-stale").body("x").retrieve()
                    .body(String.class))
                    .as("not the caller's token: left to the client, not the caller's StaleTokenException")
                    .isInstanceOf(HttpClientErrorException.Conflict.class);
        }
    }

    @Test
    void noHeaderOnAPathNoFilterCoversIsTheServicesOwnLostToken() throws Exception {
        JsonNode problem = problem(exchange(plain, "POST", "/uncovered/21/note", Map.of("Content-Type", "text/plain")),
                500);
        assertThat(problem.get("title").asString()).isEqualTo("Fencing token lost");
        assertThat(problem.get("type").asString()).isEqualTo(FencingExceptionAdvice.LOST_TOKEN_TYPE.toString());
        assertThat(problem.get("resource").asString()).isEqualTo("accounts:21");
        assertThat(problem.get("detail").asString()).contains("accounts:21").doesNotContain("FencingContext.bind")
                .doesNotContain("(long");   // no method signature of the service leaves it
    }

    /**
     * The interceptor the startup check requires refuses a header no filter admitted before the handler runs (without
     * it the header was set aside and the service failed with its own lost token, the header "not read").
     */
    @Test
    void aHeaderOnAPathNoFilterCoversIsRefusedBeforeTheHandler() throws Exception {
        JsonNode problem = problem(exchange(plain, "POST", "/uncovered/19/note",
                Map.of(FencingHeader.NAME, "accounts:19#1@h", "Content-Type", "text/plain")), 403);
        assertThat(problem.get("type").asString()).isEqualTo(FencingTokenFilter.UNTRUSTED_TOKEN_TYPE);
        assertThat(problem.get("detail").asString()).contains("/accounts/*");
    }

    @Test
    void aStaleTokenIsAConflictWithTheVerdict() throws Exception {
        assertThat(exchange(plain, "POST", "/accounts/14/note",
                Map.of(FencingHeader.NAME, "accounts:14#5@new", "Content-Type", "text/plain")).status()).isEqualTo(200);
        JsonNode problem = problem(exchange(plain, "POST", "/accounts/14/note",
                Map.of(FencingHeader.NAME, "accounts:14#4@old", "Content-Type", "text/plain")), 409);
        assertThat(problem.get("title").asString()).isEqualTo("Stale fencing token");
        assertThat(problem.get("type").asString()).isEqualTo(FencingExceptionAdvice.STALE_TOKEN_TYPE.toString());
        assertThat(problem.get("resource").asString()).isEqualTo("accounts:14");
        assertThat(problem.get("presented").asString()).isEqualTo("accounts:14#4@old");
        assertThat(problem.get("maxSeen").asLong()).isEqualTo(5);
        assertThat(problem.get("verdict").asString()).isEqualTo("stale");
    }

    // ---- failures that pass: 503 with Retry-After ----

    @Test
    void aLockNotAcquiredIsServiceUnavailableWithRetryAfter() throws Exception {
        Answer answer = exchange(plain, "POST", "/accounts/15/lock-timeout", Map.of("Content-Type", "text/plain"));
        JsonNode problem = problem(answer, 503);
        assertThat(answer.retryAfter()).isEqualTo("1");
        assertThat(problem.get("title").asString()).isEqualTo("Lock not acquired");
        assertThat(problem.get("type").asString()).isEqualTo(FencingExceptionAdvice.LOCK_NOT_ACQUIRED_TYPE.toString());
        assertThat(problem.get("resource").asString()).isEqualTo("accounts:15");
        assertThat(problem.get("detail").asString()).contains("accounts:15").contains("not acquired")
                .doesNotContain("250ms");
    }

    @Test
    void aBusyFenceIsServiceUnavailableWithRetryAfter() throws Exception {
        Answer answer = exchange(plain, "POST", "/accounts/16/busy", Map.of("Content-Type", "text/plain"));
        JsonNode problem = problem(answer, 503);
        assertThat(answer.retryAfter()).isEqualTo("1");
        assertThat(problem.get("title").asString()).isEqualTo("Fence busy");
        assertThat(problem.get("resource").asString()).isEqualTo("accounts:16");
        assertThat(problem.get("reason").asString()).isEqualTo("busy");
        assertThat(problem.get("presented").asString()).isEqualTo("accounts:16#7@h");
        assertThat(problem.get("type").asString()).isEqualTo(FencingProblems.FENCE_BUSY_TYPE.toString());
        assertThat(problem.get("detail").asString()).contains("held by another transaction")
                .doesNotContain("stayed locked"); // the exception's own text stays in the server's log
    }

    @Test
    void theServicesOwnBusyTokenOnAPathNoFilterCoversIsLeftOut() throws Exception {
        Answer answer = exchange(plain, "POST", "/uncovered/24/busy", Map.of("Content-Type", "text/plain"));
        JsonNode problem = problem(answer, 503);
        assertThat(answer.retryAfter()).isEqualTo("1");
        assertThat(problem.get("title").asString()).isEqualTo("Fence busy");
        assertThat(problem.get("resource").asString()).isEqualTo("accounts:24");
        assertThat(problem.has("presented")).as("the service's own lock's token, as a 409 leaves it out").isFalse();
    }

    @Test
    void aConflictingFenceCheckIsServiceUnavailableWithRetryAfter() throws Exception {
        Answer answer = exchange(plain, "POST", "/accounts/17/conflict", Map.of("Content-Type", "text/plain"));
        JsonNode problem = problem(answer, 503);
        assertThat(answer.retryAfter()).isEqualTo("1");
        assertThat(problem.get("title").asString()).isEqualTo("Fence conflict");
        assertThat(problem.get("resource").asString()).isEqualTo("accounts:17");
        assertThat(problem.get("reason").asString()).isEqualTo("conflict");
        assertThat(problem.get("type").asString()).isEqualTo(FencingProblems.FENCE_CONFLICT_TYPE.toString());
        assertThat(problem.has("presented")).isFalse();
    }

    @Test
    void anApplicationsOwnConcurrencyFailureIsLeftToTheApplication() {
        Answer unhandled = exchange(plain, "POST", "/accounts/18/app-concurrency",
                Map.of("Content-Type", "text/plain"));
        assertThat(unhandled.status()).as("not turned into our 503").isEqualTo(500);
        assertThat(unhandled.retryAfter()).isNull();
        assertThat(unhandled.body()).doesNotContain("Fence");

        Answer locked = exchange(plain, "POST", "/accounts/18/app-locked", Map.of("Content-Type", "text/plain"));
        assertThat(locked.status()).as("Spring's next resolver (@ResponseStatus) still applies").isEqualTo(423);
        assertThat(locked.retryAfter()).isNull();
    }

    @Test
    void anApplicationsOwnAdviceWinsOverOurs() {
        Answer answer = exchange(plain, "POST", "/accounts/19/app-owned", Map.of("Content-Type", "text/plain"));
        assertThat(answer.status()).isEqualTo(429);
        assertThat(answer.body()).isEqualTo("app says later");
    }
}
