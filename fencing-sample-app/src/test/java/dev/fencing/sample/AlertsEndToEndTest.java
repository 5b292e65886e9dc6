package dev.fencing.sample;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shipped alert rules in a real Prometheus scraping the sample's {@code --serve} endpoint: the zombie workload
 * fires the stale alert, and a healthy workload ({@code --no-zombie}) keeps every alert quiet. The rules run as a
 * copy with short windows (10 s instead of minutes, {@code for: 3s} instead of 10m), so a test takes seconds; the
 * expressions and thresholds are the shipped ones.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AlertsEndToEndTest {

    private static final String STALE = "FencingStaleAboveBaseline";

    @TempDir
    Path dir;

    private final ByteArrayOutputStream printed = new ByteArrayOutputStream();

    @Test
    void theZombieWorkloadFiresTheStaleAlert() throws Exception {
        Path rules = shortWindows(PrometheusTools.RULES, dir);
        try (Dashboard dashboard = Dashboard.start(Options.parse("--serve", "--port", "0"), out());
             PrometheusServer prometheus = PrometheusServer.start(rules, dashboard.port())) {
            JsonNode stale = awaitFiring(prometheus, STALE);
            assertThat(stale.path("labels").path("resource").asText()).isEqualTo("accounts");
            assertThat(stale.path("labels").path("instance").asText()).isEqualTo("127.0.0.1:" + dashboard.port());
            assertThat(stale.path("labels").path("severity").asText()).isEqualTo("warning");
            assertThat(stale.path("annotations").path("summary").asText())
                    .isEqualTo("Sustained stale fencing tokens on accounts (127.0.0.1:" + dashboard.port() + ")");
            // the zombie's writes are refused as stale, nothing else: no other alert fires
            assertThat(names(prometheus.alerts(), "firing")).containsExactly(STALE);
        }
    }

    @Test
    void theHealthyWorkloadKeepsEveryAlertQuiet() throws Exception {
        Path rules = shortWindows(PrometheusTools.RULES, dir);
        try (Dashboard dashboard = Dashboard.start(Options.parse("--serve", "--port", "0", "--no-zombie"), out());
             PrometheusServer prometheus = PrometheusServer.start(rules, dashboard.port())) {
            // from Prometheus' start (when every counter is new to it) until it has held 15 s of the workload,
            // longer than a window plus for:, no alert is ever pending or firing
            long quietUntil = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(45);
            while (quietUntil == 0 || System.nanoTime() < quietUntil) {
                assertThat(prometheus.alerts()).as("alerts under the healthy workload").isEmpty();
                if (quietUntil == 0 && heldWindow(prometheus)) {
                    quietUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
                }
                assertThat(System.nanoTime()).as("a full window of scrapes within 45 s; prometheus log:%n%s",
                        prometheus.log()).isLessThan(deadline);
                Thread.sleep(500);
            }
            // every series the rules read exists in the scrape (the error counter only appears at a first failure),
            // but those created at their first event, named as the library names them
            for (String metric : metricsIn(PrometheusTools.RULES)) {
                if (CREATED_AT_FIRST_EVENT.contains(metric) || NOT_REGISTERED_HERE.contains(metric)) {
                    continue;
                }
                assertThat(prometheus.query(metric)).as(metric).isNotEmpty();
            }
            assertThat(prometheus.query("fencing_checks_total{outcome=\"stale\"} > 0")).isEmpty();
            assertThat(prometheus.query("increase(fencing_checks_total{outcome=\"accepted\"}[10s]) > 0")).isNotEmpty();
            assertThat(evaluatedRules(prometheus)).isEqualTo(9);
        }
    }

    @Test
    void theTestCopyShortensEveryWindowAndKeepsTheThresholds() throws Exception {
        String shipped = Files.readString(PrometheusTools.RULES);
        String copy = Files.readString(shortWindows(PrometheusTools.RULES, dir));
        assertThat(copy).contains("[10s]", "offset 10s", "for: 3s", "> 0.05");
        assertThat(copy).doesNotContainPattern("\\[\\d+[mhd]]").doesNotContainPattern("offset \\d+[mhd]")
                .doesNotContainPattern("for: \\d+[mhd]");
        assertThat(copy.replaceAll("\\[\\d+[smhd]]|offset \\d+[smhd]|for: \\d+[smhd]", "*"))
                .isEqualTo(shipped.replaceAll("\\[\\d+[smhd]]|offset \\d+[smhd]|for: \\d+[smhd]", "*"));
    }

    /** A copy of {@code rules} with every range and offset 10 s and every {@code for:} 3 s. */
    static Path shortWindows(Path rules, Path dir) throws Exception {
        String text = Files.readString(rules)
                .replaceAll("\\[\\d+[mhd]]", "[10s]")
                .replaceAll("offset \\d+[mhd]", "offset 10s")
                .replaceAll("for: \\d+[mhd]", "for: 3s");
        Path copy = dir.resolve("fencing-alerts.yml");
        Files.writeString(copy, text);
        return copy;
    }

    /** Prometheus has scraped over 10 s (a window) of accepted writes and evaluated every rule. */
    private static boolean heldWindow(PrometheusServer prometheus) throws Exception {
        return !prometheus.query("count_over_time(fencing_checks_total{outcome=\"accepted\"}[12s]) >= 11").isEmpty()
                && !prometheus.query("increase(fencing_checks_total{outcome=\"accepted\"}[10s]) > 0").isEmpty()
                && evaluatedRules(prometheus) == 9;
    }

    /**
     * The counters that exist only after a first event (a healthy workload has none): the received tokens no check
     * presented, in the Prometheus form of the library's own name, so a typo in the rules still fails.
     */
    static final Set<String> CREATED_AT_FIRST_EVENT = Set.of(
            dev.fencing.metrics.FencingMetrics.UNCHECKED_RECEIPTS.replace('.', '_') + "_total");

    /**
     * The counters of parts the sample's plain-Java workload does not run (the web filters, the listener advice and
     * the Reactor hook count the scopes work left open), named as the library names them.
     */
    static final Set<String> NOT_REGISTERED_HERE = Set.of(
            dev.fencing.metrics.FencingMetrics.LEFT_SCOPES.replace('.', '_') + "_total");

    private static Set<String> metricsIn(Path rules) throws Exception {
        Set<String> metrics = new TreeSet<>();
        Matcher metric = Pattern.compile("fencing_[a-z_]+_total").matcher(Files.readString(rules));
        while (metric.find()) {
            metrics.add(metric.group());
        }
        assertThat(metrics).contains("fencing_checks_total", "fencing_issuer_leases_lost_total");
        return metrics;
    }

    private static int evaluatedRules(PrometheusServer prometheus) throws Exception {
        int evaluated = 0;
        for (JsonNode group : prometheus.rules()) {
            for (JsonNode rule : group.path("rules")) {
                assertThat(rule.path("health").asText()).as("rule %s: %s", rule.path("name").asText(),
                        rule.path("lastError").asText()).isIn("ok", "unknown");
                if (rule.path("health").asText().equals("ok")) {
                    evaluated++;
                }
            }
        }
        return evaluated;
    }

    private static JsonNode awaitFiring(PrometheusServer prometheus, String name) throws Exception {
        JsonNode[] found = new JsonNode[1];
        await(prometheus, () -> {
            for (JsonNode alert : prometheus.alerts()) {
                if (alert.path("labels").path("alertname").asText().equals(name)
                        && alert.path("state").asText().equals("firing")) {
                    found[0] = alert;
                    return true;
                }
            }
            return false;
        }, name + " firing");
        return found[0];
    }

    private static Set<String> names(List<JsonNode> alerts, String state) {
        Set<String> names = new TreeSet<>();
        for (JsonNode alert : alerts) {
            if (alert.path("state").asText().equals(state)) {
                names.add(alert.path("labels").path("alertname").asText());
            }
        }
        return names;
    }

    private interface Condition {
        boolean holds() throws Exception;
    }

    private static void await(PrometheusServer prometheus, Condition condition, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
        while (!condition.holds()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no " + what + " within 40 s; alerts: " + prometheus.alerts()
                        + "\nprometheus log:\n" + prometheus.log());
            }
            Thread.sleep(250);
        }
    }

    private PrintStream out() {
        return new PrintStream(printed, true, StandardCharsets.UTF_8);
    }
}
