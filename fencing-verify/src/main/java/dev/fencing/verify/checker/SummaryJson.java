package dev.fencing.verify.checker;

import dev.fencing.verify.history.HistoryJson;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes a {@link CheckResult} as {@code summary.json}: the verdict, the run's parameters as given, anomaly counts
 * by kind, every anomaly with its events in the history's own line format, each check's report and the
 * availability figures. Field names are lower-case and dashed; the layout is in docs/verification.md.
 */
public final class SummaryJson {

    private static final JsonMapper MAPPER = JsonMapper.builder().build();

    private SummaryJson() {
    }

    /** The summary document of {@code result}; {@code run} (workload, issuer, command, ...) is copied as given. */
    public static ObjectNode toJson(CheckResult result, Map<String, ?> run) {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("verdict", result.verdict().label());
        root.set("run", MAPPER.valueToTree(run));
        root.put("events", result.events());
        root.put("truncated-lines", result.truncatedLines());
        root.put("anomaly-count", result.anomalies().size());
        Map<String, Integer> byKind = new TreeMap<>();
        result.anomalies().forEach(a -> byKind.merge(a.kind().label(), 1, Integer::sum));
        root.set("anomalies-by-kind", MAPPER.valueToTree(byKind));
        ArrayNode anomalies = root.putArray("anomalies");
        for (Anomaly anomaly : result.anomalies()) {
            ObjectNode node = anomalies.addObject();
            node.put("kind", anomaly.kind().label());
            node.put("resource", anomaly.resource());
            node.put("description", anomaly.description());
            ArrayNode events = node.putArray("events");
            anomaly.events().forEach(e -> events.add(HistoryJson.toNode(e)));
        }
        ArrayNode checks = root.putArray("checks");
        for (CheckReport report : result.checks()) {
            ObjectNode node = checks.addObject();
            node.put("check", report.check());
            node.put("status", report.status().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
            node.put("note", report.note());
            node.put("anomalies", report.anomalies().size());
            node.set("figures", MAPPER.valueToTree(report.figures()));
        }
        ObjectNode availability = root.putObject("availability");
        availability.set("all", stats(result.availability().all()));
        ArrayNode windows = availability.putArray("windows");
        result.availability().windows().forEach(w -> windows.add(stats(w)));
        availability.set("outside", stats(result.availability().outside()));
        return root;
    }

    /** Writes the summary of {@code result} to {@code file}, pretty-printed. */
    public static void write(CheckResult result, Map<String, ?> run, Path file) throws IOException {
        Files.writeString(file, MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(toJson(result, run)) + "\n",
                StandardCharsets.UTF_8);
    }

    private static ObjectNode stats(WindowStats stats) {
        ObjectNode node = MAPPER.createObjectNode();
        node.put("label", stats.label());
        node.put("from-mono", stats.fromMono());
        node.put("to-mono", stats.toMono());
        node.put("seconds", stats.seconds());
        node.put("ok", stats.ok());
        node.put("fail", stats.fail());
        node.put("info", stats.info());
        node.put("ok-rate", stats.okRate());
        node.put("fail-rate", stats.failRate());
        node.put("info-rate", stats.infoRate());
        return node;
    }
}
