package dev.fencing.verify.checker;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes a {@link CheckResult} as a Markdown page for people: the verdict, the run's parameters, a table of the
 * checks, anomaly counts by kind with the first {@value #LISTED} anomalies described (summary.json has them all),
 * and a table of availability overall, outside nemesis windows and per window.
 */
public final class MarkdownSummary {

    /** How many anomalies the page describes one by one. */
    public static final int LISTED = 50;

    private MarkdownSummary() {
    }

    /** The page for {@code result}; {@code run} (workload, issuer, command, ...) is listed as given. */
    public static String render(CheckResult result, Map<String, ?> run) {
        StringBuilder md = new StringBuilder();
        List<Anomaly> anomalies = result.anomalies();
        md.append("# Verification summary\n\n");
        md.append("**Verdict: ").append(result.verdict().label()).append("** (").append(anomalies.size())
                .append(anomalies.size() == 1 ? " anomaly" : " anomalies").append(", ").append(result.events())
                .append(" events");
        if (result.truncatedLines() > 0) {
            md.append(", ").append(result.truncatedLines()).append(" truncated last line dropped");
        }
        md.append(")\n\n");
        if (!run.isEmpty()) {
            md.append("| run | |\n|---|---|\n");
            run.forEach((k, v) -> md.append("| ").append(cell(k)).append(" | ").append(cell(String.valueOf(v)))
                    .append(" |\n"));
            md.append('\n');
        }
        md.append("## Checks\n\n| check | status | anomalies | note |\n|---|---|---|---|\n");
        for (CheckReport report : result.checks()) {
            md.append("| ").append(report.check()).append(" | ")
                    .append(report.status().name().toLowerCase(Locale.ROOT).replace('_', ' ')).append(" | ")
                    .append(report.anomalies().size()).append(" | ").append(cell(report.note())).append(" |\n");
        }
        md.append("\n## Anomalies\n\n");
        if (anomalies.isEmpty()) {
            md.append("None.\n");
        } else {
            Map<String, Integer> byKind = new TreeMap<>();
            anomalies.forEach(a -> byKind.merge(a.kind().label(), 1, Integer::sum));
            md.append("| kind | count |\n|---|---|\n");
            byKind.forEach((k, n) -> md.append("| ").append(k).append(" | ").append(n).append(" |\n"));
            md.append('\n');
            anomalies.stream().limit(LISTED).forEach(a -> md.append("- `").append(a.kind().label()).append("` ")
                    .append(a.resource() == null ? "" : "`" + a.resource() + "`: ").append(a.description())
                    .append('\n'));
            if (anomalies.size() > LISTED) {
                md.append("- ... and ").append(anomalies.size() - LISTED).append(" more (summary.json lists all)\n");
            }
        }
        md.append("\n## Availability\n\n"
                + "| stretch | seconds | ok | fail | info | ok rate |\n|---|---|---|---|---|---|\n");
        Availability availability = result.availability();
        row(md, availability.all());
        row(md, availability.outside());
        availability.windows().forEach(w -> row(md, w));
        return md.toString();
    }

    /** Writes the page for {@code result} to {@code file}. */
    public static void write(CheckResult result, Map<String, ?> run, Path file) throws IOException {
        Files.writeString(file, render(result, run), StandardCharsets.UTF_8);
    }

    private static void row(StringBuilder md, WindowStats stats) {
        md.append("| ").append(cell(stats.label())).append(" | ")
                .append(String.format(Locale.ROOT, "%.1f", stats.seconds())).append(" | ").append(stats.ok())
                .append(" | ").append(stats.fail()).append(" | ").append(stats.info()).append(" | ")
                .append(String.format(Locale.ROOT, "%.1f%%", 100 * stats.okRate())).append(" |\n");
    }

    private static String cell(String text) {
        return text == null ? "" : text.replace("|", "\\|").replace("\n", " ");
    }
}
