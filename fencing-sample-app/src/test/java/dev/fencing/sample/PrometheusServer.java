package dev.fencing.sample;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real {@code prometheus} server for one test: scrapes one loopback target every second, evaluates the given rules
 * file every second, keeps its data in a temporary directory, and is killed and deleted on close (also when it fails
 * to start). Its HTTP API answers on a free loopback port.
 */
final class PrometheusServer implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path root;
    private final Path log;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final int port;
    private final Process process;

    private PrometheusServer(Path rules, int targetPort) throws Exception {
        String binary = PrometheusTools.binary("prometheus");
        root = Files.createTempDirectory("fencing-prometheus-");
        log = root.resolve("prometheus.log");
        port = freePort();
        Path config = root.resolve("prometheus.yml");
        Files.writeString(config, """
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                  evaluation_interval: 1s
                rule_files:
                  - %s
                scrape_configs:
                  - job_name: fencing-sample
                    metrics_path: /metrics
                    static_configs:
                      - targets: ['127.0.0.1:%d']
                """.formatted(rules.toAbsolutePath(), targetPort));
        process = new ProcessBuilder(binary, "--config.file=" + config, "--storage.tsdb.path=" + root.resolve("data"),
                "--web.listen-address=127.0.0.1:" + port, "--log.level=warn")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    /** Starts the server and waits until its API answers as ready. */
    static PrometheusServer start(Path rules, int targetPort) throws Exception {
        PrometheusServer server = new PrometheusServer(rules, targetPort);
        try {
            server.awaitReady();
            return server;
        } catch (Exception | Error e) {
            server.close();
            throw e;
        }
    }

    private void awaitReady() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            if (!process.isAlive()) {
                throw new IllegalStateException("prometheus exited with " + process.exitValue() + ":\n" + log());
            }
            try {
                HttpResponse<String> ready = http.send(HttpRequest.newBuilder(URI.create(base() + "/-/ready"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                if (ready.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("prometheus was not ready within 30 s:\n" + log());
            }
            Thread.sleep(100);
        }
    }

    /** The alerts pending or firing now ({@code /api/v1/alerts}). */
    List<JsonNode> alerts() throws Exception {
        List<JsonNode> alerts = new ArrayList<>();
        api("/api/v1/alerts").path("alerts").forEach(alerts::add);
        return alerts;
    }

    /** The result of an instant PromQL query ({@code /api/v1/query}). */
    JsonNode query(String promql) throws Exception {
        return api("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8)).path("result");
    }

    /** The loaded rule groups ({@code /api/v1/rules}). */
    JsonNode rules() throws Exception {
        return api("/api/v1/rules").path("groups");
    }

    private JsonNode api(String pathAndQuery) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(base() + pathAndQuery))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        JsonNode body = JSON.readTree(response.body());
        if (response.statusCode() != 200 || !"success".equals(body.path("status").asText())) {
            throw new IllegalStateException("prometheus " + pathAndQuery + " answered " + response.statusCode() + ": "
                    + response.body());
        }
        return body.path("data");
    }

    private String base() {
        return "http://127.0.0.1:" + port;
    }

    /** The server's own log, for failure messages. */
    String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() throws Exception {
        if (process != null) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
