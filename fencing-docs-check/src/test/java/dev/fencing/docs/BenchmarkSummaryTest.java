package dev.fencing.docs;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/benchmarks.md is where the figures live; the README's "What it costs" summary is a copy of the summary there
 * (between the {@value #START} and {@value #END} markers), so the two never disagree. Every JSON result file the page
 * names exists beside it and holds JMH results of the benchmark class the page says produced it.
 *
 * <p>After a new benchmark run, edit the summary in docs/benchmarks.md and run {@code mvn -pl fencing-docs-check -am
 * verify -Dtest=BenchmarkSummaryTest -Dsurefire.failIfNoSpecifiedTests=false -Dbenchmarks.update=true}, which copies
 * it into the README.
 */
class BenchmarkSummaryTest {

    static final String START = "<!-- benchmark-summary:start (BenchmarkSummaryTest) -->";
    static final String END = "<!-- benchmark-summary:end -->";

    private static final Pattern JSON_NAMED = Pattern.compile("`([a-z0-9-]+\\.json)`");
    private static final Pattern BENCHMARK_IN_JSON = Pattern.compile("\"benchmark\"\\s*:\\s*\"([^\"]+)\"");

    @Test
    void theReadmeSummaryIsTheOneInTheBenchmarksPage() throws Exception {
        Path root = SnippetCheckTest.repositoryRoot();
        String page = Files.readString(root.resolve("docs/benchmarks.md"));
        Path readmeFile = root.resolve("README.md");
        String readme = Files.readString(readmeFile);
        String summary = between(page, "docs/benchmarks.md");
        assertThat(summary).as("the summary in docs/benchmarks.md").isNotBlank();
        if (Boolean.getBoolean("benchmarks.update")) {
            int start = readme.indexOf(START);
            int end = readme.indexOf(END);
            assertThat(start).as("README.md has the summary markers").isNotNegative();
            readme = readme.substring(0, start + START.length()) + summary + readme.substring(end);
            Files.writeString(readmeFile, readme);
        }
        assertThat(between(readme, "README.md"))
                .as("README.md's summary is docs/benchmarks.md's; copy it with -Dbenchmarks.update=true")
                .isEqualTo(summary);
    }

    @Test
    void everyResultFileThePageNamesExistsAndHoldsJmhResults() throws Exception {
        Path root = SnippetCheckTest.repositoryRoot();
        String page = Files.readString(root.resolve("docs/benchmarks.md"));
        Set<String> named = new LinkedHashSet<>();
        Matcher json = JSON_NAMED.matcher(page);
        while (json.find()) {
            named.add(json.group(1));
        }
        assertThat(named).as("JSON result files named in docs/benchmarks.md").isNotEmpty();
        List<String> problems = new ArrayList<>();
        for (String file : named) {
            Path path = root.resolve("docs/benchmarks").resolve(file);
            if (!Files.isRegularFile(path)) {
                problems.add(file + " is named but missing from docs/benchmarks/");
                continue;
            }
            Matcher benchmark = BENCHMARK_IN_JSON.matcher(Files.readString(path));
            if (!benchmark.find()) {
                problems.add(file + " holds no JMH result");
                continue;
            }
            String className = benchmark.group(1).replaceAll("\\.[^.]+$", "");
            String simpleName = className.substring(className.lastIndexOf('.') + 1);
            if (!page.contains(simpleName)) {
                problems.add(file + " holds results of " + simpleName + ", which docs/benchmarks.md never names");
            }
            Path source = root.resolve("fencing-benchmarks/src/main/java")
                    .resolve(className.replace('.', '/') + ".java");
            if (!Files.isRegularFile(source)) {
                problems.add(file + " holds results of " + className + ", which is not a benchmark of this build");
            }
        }
        assertThat(problems).isEmpty();
    }

    private static String between(String text, String where) {
        int start = text.indexOf(START);
        int end = text.indexOf(END);
        assertThat(start).as(where + " has " + START).isNotNegative();
        assertThat(end).as(where + " has " + END + " after the start marker").isGreaterThan(start);
        return text.substring(start + START.length(), end);
    }
}
