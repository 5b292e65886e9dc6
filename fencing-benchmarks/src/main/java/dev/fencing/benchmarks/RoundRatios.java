package dev.fencing.benchmarks;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Ratios and differences between benchmarks paired by round: given the JSON results of several short JMH runs of the
 * same benchmarks (rounds, run one after the other), it takes each round's ratio (or difference) of two benchmarks
 * and reports their mean with a 99.9% Student-t interval over the rounds. A slow minute of this VM then moves both
 * figures of the round it falls in, instead of one benchmark of a single long run; the interval is over rounds, so
 * it is wide with few rounds. Also printed: the median of the rounds' figures, and the figure of the best rounds (each
 * benchmark's best score over the rounds, the one the VM disturbed least). It also merges the rounds into one JSON
 * file (each entry marked with its round).
 *
 * <p>Usage: {@code RoundRatios --merged out.json [--ratio A/B]... [--diff A-B]... round1.json round2.json ...},
 * where A and B name a benchmark method, optionally with JMH parameters and a metric:
 * {@code insertFenced[database=mariadb]#p99}; the metric is the score by default, {@code #p50}/{@code #p99} a
 * percentile of a sample-time benchmark, {@code #alloc} the bytes allocated per operation ({@code -prof gc}). A
 * member method of a JMH group ({@code @Group}) is named as a benchmark of its own.
 */
public final class RoundRatios {

    /** Two-sided 99.9% quantiles of Student's t for 1..30 degrees of freedom; 3.29 beyond. */
    private static final double[] T999 = {636.62, 31.60, 12.92, 8.61, 6.87, 5.96, 5.41, 5.04, 4.78, 4.59, 4.44,
            4.32, 4.22, 4.14, 4.07, 4.01, 3.97, 3.92, 3.88, 3.85, 3.82, 3.79, 3.77, 3.75, 3.73, 3.71, 3.69, 3.67, 3.66,
            3.65};

    private RoundRatios() {
    }

    public static void main(String[] args) throws IOException {
        Path merged = null;
        List<String[]> specs = new ArrayList<>();
        List<Path> rounds = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--merged" -> merged = Path.of(args[++i]);
                case "--ratio" -> specs.add(split(args[++i], '/', "ratio"));
                case "--diff" -> specs.add(split(args[++i], '-', "diff"));
                default -> rounds.add(Path.of(args[i]));
            }
        }
        if (rounds.isEmpty()) {
            throw new IllegalArgumentException("Usage: RoundRatios --merged out.json [--ratio A/B]... [--diff A-B]... "
                    + "round1.json round2.json ...");
        }
        JsonMapper mapper = JsonMapper.builder().build();
        List<JsonNode> results = new ArrayList<>();
        ArrayNode all = mapper.createArrayNode();
        for (int r = 0; r < rounds.size(); r++) {
            JsonNode round = mapper.readTree(rounds.get(r).toFile());
            results.add(round);
            for (JsonNode entry : round) {
                ObjectNode copy = ((ObjectNode) entry).deepCopy();
                copy.put("round", r + 1);
                all.add(copy);
            }
        }
        if (merged != null) {
            Files.createDirectories(merged.toAbsolutePath().getParent());
            mapper.writerWithDefaultPrettyPrinter().writeValue(merged.toFile(), all);
        }
        printScores(results);
        for (String[] spec : specs) {
            double[] values = new double[results.size()];
            double bestA = Double.NaN;
            double bestB = Double.NaN;
            for (int r = 0; r < results.size(); r++) {
                Figure a = figure(results.get(r), spec[1], rounds.get(r));
                Figure b = figure(results.get(r), spec[2], rounds.get(r));
                values[r] = spec[0].equals("ratio") ? a.value / b.value : a.value - b.value;
                bestA = r == 0 ? a.value : a.better(bestA);
                bestB = r == 0 ? b.value : b.better(bestB);
            }
            double bestOfRounds = spec[0].equals("ratio") ? bestA / bestB : bestA - bestB;
            System.out.println(describe(spec, values) + String.format(Locale.ROOT, "; median %.3f; best of rounds %.3f",
                    median(values), bestOfRounds));
        }
    }

    /** One benchmark's figure in one round, and whether a higher one is better (a throughput). */
    private record Figure(double value, boolean higherIsBetter) {

        /** The better of this figure and {@code other}: the round the VM disturbed least. */
        double better(double other) {
            return higherIsBetter ? Math.max(value, other) : Math.min(value, other);
        }
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static String[] split(String spec, char operator, String kind) {
        // the operator between the two names: the last one outside brackets (parameters may contain it)
        int depth = 0;
        int at = -1;
        for (int i = 0; i < spec.length(); i++) {
            char c = spec.charAt(i);
            depth += c == '[' ? 1 : c == ']' ? -1 : 0;
            if (c == operator && depth == 0) {
                at = i;
            }
        }
        if (at <= 0 || at == spec.length() - 1) {
            throw new IllegalArgumentException("--" + kind + " '" + spec + "': expected two benchmark names joined by '"
                    + operator + "'");
        }
        return new String[] {kind, spec.substring(0, at), spec.substring(at + 1)};
    }

    private static void printScores(List<JsonNode> rounds) {
        Map<String, List<String>> rows = new LinkedHashMap<>();
        for (JsonNode round : rounds) {
            for (JsonNode entry : round) {
                String name = name(entry);
                rows.computeIfAbsent(name, k -> new ArrayList<>()).add(String.format(Locale.ROOT, "%.3f",
                        entry.path("primaryMetric").path("score").asDouble()));
            }
        }
        rows.forEach((name, scores) -> System.out.println("score " + name + ": " + String.join(" ", scores)));
    }

    private static String name(JsonNode entry) {
        String method = method(entry);
        JsonNode params = entry.path("params");
        if (params.isMissingNode() || params.isEmpty()) {
            return method;
        }
        StringBuilder name = new StringBuilder(method).append('[');
        Iterator<Map.Entry<String, JsonNode>> fields = params.properties().iterator();
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> field = fields.next();
            name.append(field.getKey()).append('=').append(field.getValue().asString());
            if (fields.hasNext()) {
                name.append(',');
            }
        }
        return name.append(']').toString();
    }

    private static Figure figure(JsonNode round, String spec, Path file) {
        int hash = spec.indexOf('#');
        String wanted = hash < 0 ? spec : spec.substring(0, hash);
        String metric = hash < 0 ? "score" : spec.substring(hash + 1);
        for (JsonNode entry : round) {
            JsonNode primary = scoreOf(entry, wanted);
            if (primary == null) {
                continue;
            }
            JsonNode found = switch (metric) {
                case "score" -> primary.path("score");
                case "p50" -> primary.path("scorePercentiles").path("50.0");
                case "p99" -> primary.path("scorePercentiles").path("99.0");
                case "alloc" -> entry.path("secondaryMetrics").path("gc.alloc.rate.norm").path("score");
                default -> throw new IllegalArgumentException("Unknown metric '#" + metric + "' in '" + spec
                        + "': expected #p50, #p99 or #alloc");
            };
            if (found.isMissingNode()) {
                throw new IllegalArgumentException("'" + spec + "' has no " + metric + " in " + file);
            }
            boolean throughput = entry.path("mode").asString().equals("thrpt") && metric.equals("score");
            return new Figure(found.asDouble(), throughput);
        }
        throw new IllegalArgumentException("No benchmark '" + wanted + "' in " + file);
    }

    /**
     * The metric of {@code entry} named {@code wanted}: its primary metric when the entry is that benchmark, or the
     * secondary metric of that name when the entry is a JMH group ({@code @Group}) whose member method it is (JMH
     * reports each member's score, with its percentiles, as a secondary metric named after the method), with the
     * same parameters; {@code null} when neither.
     */
    private static JsonNode scoreOf(JsonNode entry, String wanted) {
        String name = name(entry);
        if (name.equals(wanted)) {
            return entry.path("primaryMetric");
        }
        String method = method(entry);
        String parameters = name.substring(method.length());
        if (!wanted.endsWith(parameters)) {
            return null;
        }
        JsonNode member = entry.path("secondaryMetrics")
                .path(wanted.substring(0, wanted.length() - parameters.length()));
        return member.isMissingNode() || member.path("scorePercentiles").isMissingNode() ? null : member;
    }

    private static String method(JsonNode entry) {
        String benchmark = entry.path("benchmark").asString();
        return benchmark.substring(benchmark.lastIndexOf('.') + 1);
    }

    private static String describe(String[] spec, double[] values) {
        int n = values.length;
        double mean = 0;
        double min = Double.MAX_VALUE;
        double max = -Double.MAX_VALUE;
        for (double v : values) {
            mean += v / n;
            min = Math.min(min, v);
            max = Math.max(max, v);
        }
        double variance = 0;
        for (double v : values) {
            variance += (v - mean) * (v - mean) / Math.max(1, n - 1);
        }
        double error = n < 2 ? Double.NaN : T999[Math.min(n - 2, T999.length - 1)] * Math.sqrt(variance / n);
        StringBuilder each = new StringBuilder();
        for (double v : values) {
            each.append(String.format(Locale.ROOT, " %.3f", v));
        }
        return String.format(Locale.ROOT, "%s %s %s %s: %.3f ± %.3f (99.9%%, %d rounds; min %.3f, max %.3f); rounds:%s",
                spec[0], spec[1], spec[0].equals("ratio") ? "/" : "-", spec[2], mean, error, n, min, max, each);
    }
}
