package dev.fencing.sample;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * {@code --serve}: several clients keep writing through {@code @Fenced} with fresh leases, a zombie keeps trying
 * with tokens it held earlier (unless {@code --no-zombie}), and the counters are served for Prometheus at
 * {@code /metrics} on loopback.
 */
final class Dashboard implements AutoCloseable {

    private static final int CLIENTS = 3;
    private static final int ACCOUNTS = 5;

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final SampleDatabase db;
    private final AnnotationConfigApplicationContext context;
    private final HttpServer server;
    private final ExecutorService workers = Executors.newFixedThreadPool(CLIENTS + 1);
    private final Map<String, FencingToken> oldTokens = new ConcurrentHashMap<>();
    private final CountDownLatch end = new CountDownLatch(1);
    private final Options options;
    private volatile boolean running = true;

    private Dashboard(Options options, PrintStream out) throws IOException {
        this.options = options;
        this.db = new SampleDatabase(options);
        this.context = new AnnotationConfigApplicationContext();
        context.registerBean(SampleDatabase.class, () -> db);
        context.registerBean(Options.class, () -> new Options(false, true, options.port(),
                java.time.Duration.ofSeconds(5), null, null, null, null, null, "", null, options.zombie()));
        context.registerBean(MeterRegistry.class, () -> registry);
        context.register(SampleConfiguration.class);
        context.refresh();
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), options.port()), 0);
        server.createContext("/metrics", exchange -> {
            byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream os = exchange.getResponseBody()) {
                os.write(body);
            }
        });
        server.start();
        out.println("fencing sample --serve: " + CLIENTS + " clients on " + ACCOUNTS + " accounts, "
                + (options.zombie() ? "a zombie every second" : "no zombie") + " (" + db.description + ")");
        out.println("Prometheus metrics at " + url());
        out.flush();
    }

    static Dashboard start(Options options, PrintStream out) throws IOException {
        Dashboard dashboard = new Dashboard(options, out);
        dashboard.startWorkload();
        return dashboard;
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/metrics";
    }

    int port() {
        return server.getAddress().getPort();
    }

    private void startWorkload() {
        AccountService service = context.getBean(AccountService.class);
        AccountRepository repository = context.getBean(AccountRepository.class);
        for (int c = 0; c < CLIENTS; c++) {
            workers.submit(() -> {
                while (running) {
                    String account = String.valueOf(ThreadLocalRandom.current().nextInt(ACCOUNTS));
                    try {
                        service.withLock(account, () -> {
                            FencingToken token = FencingContext.current("accounts:" + account);
                            oldTokens.putIfAbsent(account, token); // the first token of each account turns zombie later
                            repository.write(account, "v" + token.value());
                        });
                        Thread.sleep(50);
                    } catch (InterruptedException e) {
                        return;
                    } catch (RuntimeException e) {
                        // a refused or failed write is counted by the library; keep the workload going
                    }
                }
            });
        }
        if (options.zombie()) {
            workers.submit(this::zombie);
        }
    }

    /** Every second, writes with the first token each account had; each write is refused as stale once it is old. */
    private void zombie() {
        AccountRepository repository = context.getBean(AccountRepository.class);
        while (running) {
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                return;
            }
            for (FencingToken zombie : oldTokens.values()) {
                try (FencingScope ignored = FencingContext.bind(zombie)) {
                    repository.write(zombie.resource().substring("accounts:".length()), "zombie");
                } catch (TokenRejectedException expected) {
                    // counted as fencing_checks_total{outcome="stale"}
                } catch (RuntimeException ignored) {
                    // other failures are counted too
                }
            }
        }
    }

    void awaitEnd() throws InterruptedException {
        if (options.duration() != null) {
            end.await(options.duration().toMillis(), TimeUnit.MILLISECONDS);
        } else {
            end.await();
        }
    }

    @Override
    public void close() {
        running = false;
        end.countDown();
        workers.shutdownNow();
        try {
            workers.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        server.stop(0);
        context.close();
        db.close();
    }
}
