package dev.fencing.web;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingPropagation;
import dev.fencing.context.FencingSnapshot;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleState;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.ResponseEntity;
import org.springframework.scheduling.concurrent.ConcurrentTaskExecutor;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.support.AnnotationConfigWebApplicationContext;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.AsyncSupportConfigurer;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

import java.io.File;
import java.nio.file.Files;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On a real servlet container, the filter reports the unchecked tokens of a writing request whose handler is
 * asynchronous ({@code Callable}, {@code DeferredResult}) when the async request completes: the handler's work, and
 * its checks, run on another thread after the filter returned. Before, such requests were never reported. A probe
 * filter around the token filter registers its completion listener after the token filter's, so the test waits for
 * it (no timing guess) before reading the counter.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class UncheckedReceiptsAsyncTest {

    /** The executor of the async handlers: tokens propagated, as the starter's decorated executor does. */
    static final ExecutorService WORKERS = FencingPropagation.executorService(Executors.newFixedThreadPool(2));

    @RestController
    public static class Accounts {
        @PostMapping({"/internal/accounts/{id}/callable-unfenced", "/both/accounts/{id}/callable-unfenced"})
        public Callable<String> callableUnfenced(@PathVariable("id") long id) {
            return () -> "written";
        }

        @PostMapping({"/internal/accounts/{id}/callable-fenced", "/both/accounts/{id}/callable-fenced"})
        public Callable<String> callableFenced(@PathVariable("id") long id) {
            return () -> FencingContext.present("accounts:" + id) == null ? "none" : "checked";
        }

        @PostMapping({"/internal/accounts/{id}/callable-refused", "/both/accounts/{id}/callable-refused"})
        public Callable<ResponseEntity<String>> callableRefused(@PathVariable("id") long id) {
            return () -> ResponseEntity.status(409).body("refused");
        }

        @PostMapping({"/internal/accounts/{id}/deferred-unfenced", "/both/accounts/{id}/deferred-unfenced"})
        public DeferredResult<String> deferredUnfenced(@PathVariable("id") long id) {
            DeferredResult<String> result = new DeferredResult<>();
            WORKERS.execute(() -> result.setResult("written"));
            return result;
        }

        @PostMapping({"/internal/accounts/{id}/deferred-fenced", "/both/accounts/{id}/deferred-fenced"})
        public DeferredResult<String> deferredFenced(@PathVariable("id") long id) {
            DeferredResult<String> result = new DeferredResult<>();
            FencingSnapshot tokens = FencingContext.snapshot();
            new Thread(() -> {
                try (var ignored = FencingContext.bindOnly(tokens)) {
                    FencingContext.present("accounts:" + id);
                }
                result.setResult("checked");
            }).start();
            return result;
        }
    }

    @Configuration
    @EnableWebMvc
    static class Service implements WebMvcConfigurer {
        @Override
        public void configureAsyncSupport(AsyncSupportConfigurer configurer) {
            configurer.setTaskExecutor(new ConcurrentTaskExecutor(WORKERS));
        }

        @Bean
        Accounts accounts() {
            return new Accounts();
        }
    }

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final BlockingQueue<String> completed = new LinkedBlockingQueue<>();
    private Tomcat tomcat;
    private RestClient client;

    /** Records each request's completion, after the token filter's own completion listener ran. */
    private final Filter probe = (request, response, chain) -> {
        chain.doFilter(request, response);
        String uri = ((HttpServletRequest) request).getRequestURI();
        if (request.isAsyncStarted()) {
            request.getAsyncContext().addListener(new AsyncListener() {
                @Override
                public void onComplete(AsyncEvent event) {
                    completed.add(uri);
                }

                @Override
                public void onTimeout(AsyncEvent event) {
                }

                @Override
                public void onError(AsyncEvent event) {
                }

                @Override
                public void onStartAsync(AsyncEvent event) {
                }
            });
        } else {
            completed.add(uri);
        }
    };

    @BeforeAll
    void start() throws Exception {
        File base = Files.createTempDirectory("fencing-tomcat-async").toFile();
        tomcat = new Tomcat();
        tomcat.setBaseDir(base.getAbsolutePath());
        tomcat.setHostname("127.0.0.1");
        tomcat.setPort(0);
        tomcat.getConnector().setProperty("address", "127.0.0.1");
        Context context = tomcat.addContext("", base.getAbsolutePath());
        AnnotationConfigWebApplicationContext service = new AnnotationConfigWebApplicationContext();
        service.register(Service.class);
        Tomcat.addServlet(context, "dispatcher", new DispatcherServlet(service)).setAsyncSupported(true);
        context.addServletMappingDecoded("/", "dispatcher");
        addFilter(context, "probe", probe, "/internal/*", "/both/*");
        addFilter(context, "fencing", new FencingTokenFilter().withMeterRegistry(registry), "/internal/*");
        FilterMap asyncDispatches = addFilter(context, "fencing-both",
                new FencingTokenFilter().withMeterRegistry(registry), "/both/*");
        asyncDispatches.setDispatcher("REQUEST");
        asyncDispatches.setDispatcher("ASYNC");   // runs again on the async dispatch
        tomcat.start();
        assertThat(context.getState()).isEqualTo(LifecycleState.STARTED);
        client = RestClient.builder().baseUrl("http://127.0.0.1:" + tomcat.getConnector().getLocalPort()).build();
    }

    private static FilterMap addFilter(Context context, String name, Filter instance, String... patterns) {
        FilterDef filter = new FilterDef();
        filter.setFilterName(name);
        filter.setFilter(instance);
        filter.setAsyncSupported("true");
        context.addFilterDef(filter);
        FilterMap mapping = new FilterMap();
        mapping.setFilterName(name);
        for (String pattern : patterns) {
            mapping.addURLPattern(pattern);
        }
        context.addFilterMap(mapping);
        return mapping;
    }

    @AfterAll
    void stop() throws Exception {
        tomcat.stop();
        tomcat.destroy();
        WORKERS.shutdownNow();
    }

    private double unchecked() {
        return registry.find(FencingMetrics.UNCHECKED_RECEIPTS).tag("resource", "accounts").tag("carrier", "http")
                .counters().stream().mapToDouble(Counter::count).sum();
    }

    /** POSTs with a token for {@code accounts:1} and waits until the request completed on the server. */
    private int send(String path) throws InterruptedException {
        int status = client.post().uri(path)
                .header(FencingHeader.NAME, new FencingToken("accounts:1", 34, "caller").toText())
                .exchange((request, response) -> response.getStatusCode().value());
        assertThat(completed.poll(20, TimeUnit.SECONDS)).isEqualTo(path);
        return status;
    }

    @Test
    void anAsyncWriteThatNoCheckSawIsReportedAtItsCompletionAndACheckedOrRefusedOneIsNot() throws Exception {
        reportsOnlyTheUncheckedAsyncWrites("/internal");
    }

    /**
     * A filter mapped to async dispatches too runs again on the async dispatch, with the header's tokens bound afresh:
     * that second pass reports nothing (it would report tokens the handler's thread had checked), the request's own
     * dispatch reports at completion.
     */
    @Test
    void aFilterMappedToAsyncDispatchesTooReportsOnceAtCompletion() throws Exception {
        reportsOnlyTheUncheckedAsyncWrites("/both");
    }

    private void reportsOnlyTheUncheckedAsyncWrites(String prefix) throws InterruptedException {
        double before = unchecked();
        assertThat(send(prefix + "/accounts/1/callable-fenced")).isEqualTo(200);
        assertThat(send(prefix + "/accounts/1/deferred-fenced")).isEqualTo(200);
        assertThat(send(prefix + "/accounts/1/callable-refused")).isEqualTo(409);
        assertThat(unchecked() - before).as("checked on the async thread, or refused").isZero();

        assertThat(send(prefix + "/accounts/1/callable-unfenced")).isEqualTo(200);
        assertThat(unchecked() - before).as("a Callable that wrote around the fence").isEqualTo(1);
        assertThat(send(prefix + "/accounts/1/deferred-unfenced")).isEqualTo(200);
        assertThat(unchecked() - before).as("a DeferredResult that wrote around the fence").isEqualTo(2);
    }
}
