package dev.fencing.sample;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code --serve} exposes the counters for Prometheus, and the zombie's rejections keep growing. */
class DashboardTest {

    private static final Pattern STALE = Pattern.compile(
            "^fencing_checks_total\\{[^}]*outcome=\"stale\"[^}]*} ([0-9.E]+)$", Pattern.MULTILINE);

    @Test
    void theScrapeEndpointShowsStaleChecksIncreasing() throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (Dashboard dashboard = Dashboard.start(Options.parse("--serve", "--port", "0"),
                new PrintStream(printed, true, StandardCharsets.UTF_8))) {
            assertThat(printed.toString(StandardCharsets.UTF_8)).contains("Prometheus metrics at " + dashboard.url());
            HttpClient http = HttpClient.newHttpClient();
            double first = awaitStale(http, dashboard.url(), 0);
            double second = awaitStale(http, dashboard.url(), first);
            assertThat(second).isGreaterThan(first);

            // every series the shipped Grafana dashboard queries exists in the scrape
            String scrape = http.send(HttpRequest.newBuilder(URI.create(dashboard.url())).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            String grafana = java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "grafana",
                    "fencing-dashboard.json"));
            Matcher metric = Pattern.compile("(fencing_[a-z_]+_total)").matcher(grafana);
            int found = 0;
            while (metric.find()) {
                if (!AlertsEndToEndTest.CREATED_AT_FIRST_EVENT.contains(metric.group(1))) {
                    assertThat(scrape).as(metric.group(1)).contains(metric.group(1) + "{");
                }
                found++;
            }
            assertThat(found).isGreaterThanOrEqualTo(6);
        }
    }

    private static double awaitStale(HttpClient http, String url, double above) throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (true) {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(url)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            Matcher m = STALE.matcher(response.body());
            if (m.find() && Double.parseDouble(m.group(1)) > above) {
                assertThat(response.body())
                        .contains("fencing_checks_total{", "outcome=\"accepted\"", "resource=\"accounts\"");
                return Double.parseDouble(m.group(1));
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no stale count above " + above + " in:\n" + response.body());
            }
            Thread.sleep(200);
        }
    }
}
