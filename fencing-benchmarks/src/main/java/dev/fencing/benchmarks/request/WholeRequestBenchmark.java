package dev.fencing.benchmarks.request;

import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A whole HTTP request, fenced against unfenced: a client sends {@code POST /fenced/{id}} (with its
 * {@code Fencing-Token} header) or {@code POST /unfenced/{id}} (without) to a Spring Boot application on embedded
 * Tomcat, whose controller calls a {@code @Transactional} service, which calls a repository that reads the order,
 * updates it and inserts a line on PostgreSQL (HikariCP, {@code JdbcTemplate}). The fenced path adds everything the
 * library does in a real application: the servlet filter parsing and binding the header (the starter's
 * {@code fencing.web.filter.url-patterns=/fenced/*}), the {@code @Fenced(resource = "orders", key = "#id")} proxy
 * with its SpEL key, and the {@code JdbcFenceStore} check in the service's transaction (one round trip of its own
 * on PostgreSQL: the lock wait bound, the upsert and the bound's restore sent as one text; none with
 * {@code check-at-commit}, where it goes with COMMIT).
 *
 * <p>Shape: one application per trial (started in {@link #start}, its tables unique to the trial and dropped in
 * {@link #stop}); 4 client threads, each with its own {@link HttpClient} (HTTP/1.1, one kept-alive connection, as it
 * sends one request at a time; Tomcat's limit of 100 requests per connection is lifted) and its own
 * {@value #ORDERS_PER_CLIENT} orders, cycled through. Each order has one token for the whole trial (value 1, holder
 * {@code client-N}), as the client's lease on it would give, so every fenced request is accepted. A response other
 * than 200 with the expected total fails the benchmark, and each trial first checks that a fenced request without a
 * token is refused (428), so the fenced methods cannot quietly measure an unfenced path.
 *
 * <p>Modes: each variant is measured by two methods that differ only in their JMH mode, because one class-level
 * time unit cannot suit both: {@code *Throughput} ({@link Mode#Throughput}, ops/s over the 4 threads) and
 * {@code *Latency} ({@link Mode#SampleTime}, µs per request, with JMH's p0.50 / p0.99 / p0.999 percentiles; at these
 * rates every request is timed). JMH's own percentiles avoid a histogram library and its bookkeeping on the client
 * threads. Every method runs in its own fork and application; the ratios come from one JMH run.
 *
 * <p>{@code storeMode} selects how the application's JDBC store checks: {@code default} or {@code check-at-commit}.
 *
 * <p>Needs PostgreSQL on 127.0.0.1:5432, database {@code test}, user {@code postgres}; another database is given to
 * the fork, for example {@code -jvmArgsAppend "-Xms1g -Xmx1g -Dbench.jdbcUrl=jdbc:postgresql://... -Dbench.user=..."}.
 */
@State(Scope.Benchmark)
@Threads(4)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 10)
@Measurement(iterations = 5, time = 10)
public class WholeRequestBenchmark {

    /** Orders (fenced entities) each client owns and cycles through. */
    static final int ORDERS_PER_CLIENT = 16;

    /** Clients the order table is sized for: {@link Threads} above, with room for a larger {@code -t}. */
    static final int MAX_CLIENTS = 64;

    /** The order {@link #requireFenceActive} sends its token-less request to; no client owns it. */
    static final int PROBE_ORDER = MAX_CLIENTS * ORDERS_PER_CLIENT;

    /**
     * The JDBC store's mode. {@code default}: the check is its own round trip when the fenced method is entered;
     * {@code check-at-commit}: the check goes with the transaction's COMMIT
     * ({@code fencing.store.jdbc.check-at-commit}). The unfenced methods do not depend on it; with both values they run
     * twice, two baselines in one run.
     */
    @Param({"default", "check-at-commit"})
    public String storeMode;

    private ConfigurableApplicationContext application;
    private JdbcTemplate jdbc;
    private String ordersTable;
    private String linesTable;
    private String fenceTable;
    String baseUri;
    final AtomicInteger clients = new AtomicInteger();

    @Setup(Level.Trial)
    public void start() {
        String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        ordersTable = "bench_orders_" + suffix;
        linesTable = "bench_order_lines_" + suffix;
        fenceTable = "bench_fence_" + suffix;

        SpringApplication app = new SpringApplication(OrdersApplication.class);
        app.setWebApplicationType(WebApplicationType.SERVLET);
        app.setBannerMode(Banner.Mode.OFF);
        app.setLogStartupInfo(false);
        Map<String, Object> properties = new HashMap<>(Map.of(
                "server.address", "127.0.0.1",
                "server.port", "0",
                "spring.datasource.url", System.getProperty("bench.jdbcUrl", "jdbc:postgresql://127.0.0.1:5432/test"),
                "spring.datasource.username", System.getProperty("bench.user", "postgres"),
                "spring.datasource.hikari.maximum-pool-size", "8",
                "fencing.web.filter.url-patterns", "/fenced/*",
                "fencing.store.jdbc.table", fenceTable,
                "fencing.store.jdbc.initialize-schema", "always",
                "bench.orders-table", ordersTable,
                "bench.lines-table", linesTable));
        properties.put("logging.level.root", "WARN");
        // Tomcat closes a kept-alive connection after 100 requests by default: every 100th request would pay a new
        // connection, right at the p99 this benchmark reports
        properties.put("server.tomcat.max-keep-alive-requests", "-1");
        properties.putAll(storeProperties(storeMode));
        app.setDefaultProperties(properties);
        try {
            application = app.run();
            jdbc = application.getBean(JdbcTemplate.class);
            jdbc.execute("CREATE TABLE " + ordersTable + " (id BIGINT PRIMARY KEY, total BIGINT NOT NULL, "
                    + "version BIGINT NOT NULL)");
            jdbc.execute("CREATE TABLE " + linesTable + " (id BIGSERIAL PRIMARY KEY, order_id BIGINT NOT NULL, "
                    + "amount BIGINT NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())");
            jdbc.update("INSERT INTO " + ordersTable + " SELECT g, 0, 0 FROM generate_series(0, ?) g",
                    PROBE_ORDER);
            baseUri = "http://127.0.0.1:" + application.getEnvironment().getRequiredProperty("local.server.port");
            requireFenceActive();
        } catch (RuntimeException e) {
            stop();
            throw e;
        }
    }

    /**
     * Fails the trial unless the fence is really on the fenced path: a fenced request without a token must be
     * refused (428), not served. Otherwise (no fencing auto-configuration, an unproxied repository) the fenced
     * variant would quietly measure the unfenced one.
     */
    private void requireFenceActive() {
        HttpRequest probe = HttpRequest.newBuilder(URI.create(baseUri + "/fenced/" + PROBE_ORDER))
                .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.noBody()).build();
        HttpResponse<String> response;
        try {
            response = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()
                    .send(probe, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException("the fence probe " + probe.uri() + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted during the fence probe", e);
        }
        if (response.statusCode() != 428) {
            throw new IllegalStateException("POST " + probe.uri() + " without a Fencing-Token header answered "
                    + response.statusCode() + " '" + response.body() + "', expected 428 (missing token): the fence "
                    + "is not on the fenced path, so this run would not measure it");
        }
    }

    /** The properties that select {@code storeMode}; refuses a mode it does not know. */
    static Map<String, String> storeProperties(String storeMode) {
        return switch (storeMode) {
            case "default" -> Map.of();
            case "check-at-commit" -> Map.of("fencing.store.jdbc.check-at-commit", "true");
            default -> throw new IllegalArgumentException("storeMode '" + storeMode
                    + "' is not one of: default, check-at-commit");
        };
    }


    @TearDown(Level.Trial)
    public void stop() {
        try {
            if (jdbc != null) {
                jdbc.execute("DROP TABLE IF EXISTS " + linesTable);
                jdbc.execute("DROP TABLE IF EXISTS " + ordersTable);
                jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
            }
        } finally {
            if (application != null) {
                application.close();
            }
            application = null;
            jdbc = null;
        }
    }

    /** One client: its HTTP connection, its orders and, per order, the header carrying that order's token. */
    @State(Scope.Thread)
    public static class Client {
        HttpClient http;
        HttpRequest[] unfenced;
        HttpRequest[] fenced;
        long[] totals;
        int next;

        @Setup(Level.Trial)
        public void join(WholeRequestBenchmark bench) {
            int index = bench.clients.getAndIncrement();
            if (index >= MAX_CLIENTS) {
                throw new IllegalStateException("client " + index + " is beyond the " + MAX_CLIENTS
                        + " clients the order table holds: run with at most " + MAX_CLIENTS + " threads");
            }
            http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(5)).build();
            unfenced = new HttpRequest[ORDERS_PER_CLIENT];
            fenced = new HttpRequest[ORDERS_PER_CLIENT];
            totals = new long[ORDERS_PER_CLIENT];
            for (int i = 0; i < ORDERS_PER_CLIENT; i++) {
                long id = (long) index * ORDERS_PER_CLIENT + i;
                // one token per order for the whole trial, as the client's lease on that order would give it
                FencingToken token = new FencingToken("orders:" + id, 1, "client-" + index);
                unfenced[i] = post(bench.baseUri + "/unfenced/" + id).build();
                fenced[i] = post(bench.baseUri + "/fenced/" + id)
                        .header(FencingHeader.NAME, FencingHeader.format(List.of(token))).build();
            }
        }

        private static HttpRequest.Builder post(String uri) {
            return HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(30))
                    .POST(HttpRequest.BodyPublishers.noBody());
        }

        /** Sends the next order's request and checks the answer: 200 and the order's total, one more than before. */
        String send(HttpRequest[] requests) throws IOException, InterruptedException {
            int slot = next;
            next = slot + 1 == ORDERS_PER_CLIENT ? 0 : slot + 1;
            HttpResponse<String> response = http.send(requests[slot], HttpResponse.BodyHandlers.ofString());
            long expected = totals[slot] + OrderController.AMOUNT;
            if (response.statusCode() != 200 || !Long.toString(expected).equals(response.body())) {
                throw new IllegalStateException(requests[slot].method() + " " + requests[slot].uri()
                        + " answered " + response.statusCode() + " '" + response.body() + "', expected 200 '"
                        + expected + "'");
            }
            totals[slot] = expected;
            return response.body();
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public String unfencedThroughput(Client client) throws Exception {
        return client.send(client.unfenced);
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public String fencedThroughput(Client client) throws Exception {
        return client.send(client.fenced);
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public String unfencedLatency(Client client) throws Exception {
        return client.send(client.unfenced);
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public String fencedLatency(Client client) throws Exception {
        return client.send(client.fenced);
    }

    /*
     * Paired: fenced and unfenced requests at the same time, two clients each, in one application (a JMH group), so a
     * slow window of the machine falls on both alike and their ratio within a round does not move with it. Each
     * member's score is its own clients' requests (a secondary result named after the method). Under the shared load
     * a fenced request's extra work slows the unfenced ones too, so the throughput ratio reads the cost per request,
     * not a fully fenced application's total; the methods above measure that, one variant per fork.
     */

    @Benchmark
    @Group("pairedThroughput")
    @GroupThreads(2)
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public String pairedFencedThroughput(Client client) throws Exception {
        return client.send(client.fenced);
    }

    @Benchmark
    @Group("pairedThroughput")
    @GroupThreads(2)
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public String pairedUnfencedThroughput(Client client) throws Exception {
        return client.send(client.unfenced);
    }

    @Benchmark
    @Group("pairedLatency")
    @GroupThreads(2)
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public String pairedFencedLatency(Client client) throws Exception {
        return client.send(client.fenced);
    }

    @Benchmark
    @Group("pairedLatency")
    @GroupThreads(2)
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public String pairedUnfencedLatency(Client client) throws Exception {
        return client.send(client.unfenced);
    }
}
