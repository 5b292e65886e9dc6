package dev.fencing.docs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The commands in docs/benchmarks.md and fencing-benchmarks/run-all.sh run what they say: every benchmark selection
 * given to the benchmarks jar (a class name or a JMH regex) selects a benchmark of this build in each of its
 * alternatives, every benchmark that run-all.sh pairs for {@code RoundRatios} exists, and every class started with
 * {@code java -cp} is a class of the benchmarks module. A renamed benchmark method would otherwise leave a page of
 * commands that select nothing, or less than their table claims.
 */
class BenchmarkCommandsTest {

    private static final Path SOURCES = Path.of("fencing-benchmarks/src/main/java");
    private static final Pattern BENCHMARK_METHOD = Pattern.compile(
            "@Benchmark\\s+(?:@\\w+(?:\\([^)]*\\))?\\s+)*public\\s+[\\w.<>\\[\\], ?]+\\s+(\\w+)\\s*\\(");
    /** The selection after the jar (named, or run-all.sh's {@code "$jar"}): quoted, or a bare word. */
    private static final Pattern JAR_SELECTION = Pattern.compile(
            "(?:benchmarks\\.jar|\"\\$jar\")[ \\t]+(?:'([^']+)'|\"([^\"$]+)\"|([A-Za-z][\\w.]*))");
    /** run-all.sh's own calls: {@code run name SELECTION ...} and {@code rounds name count SELECTION ...}. */
    private static final Pattern SCRIPT_SELECTION = Pattern.compile(
            "(?m)^[ \\t]*(?:run \\S+|rounds \\S+ \\d+)[ \\t]+(?:'([^']+)'|\"([^\"]+)\"|([A-Za-z][\\w.]*))");
    private static final Pattern PAIRED = Pattern.compile("--(ratio|diff)\\s+['\"]?([^'\"\\s)]+)['\"]?");
    private static final Pattern MAIN_CLASS = Pattern.compile("(dev\\.fencing\\.benchmarks\\.[A-Z]\\w*)");

    @Test
    void everySelectionInTheDocsAndTheScriptSelectsABenchmarkInEachAlternative() throws IOException {
        Path root = SnippetCheckTest.repositoryRoot();
        List<String> benchmarks = benchmarks(root);
        assertThat(benchmarks).as("@Benchmark methods under " + SOURCES).hasSizeGreaterThan(20);
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (String file : List.of("docs/benchmarks.md", "fencing-benchmarks/run-all.sh")) {
            String text = Files.readString(root.resolve(file));
            List<String> selections = new ArrayList<>();
            collect(JAR_SELECTION.matcher(text), selections);
            if (file.endsWith(".sh")) {
                collect(SCRIPT_SELECTION.matcher(text), selections);
            }
            for (String selection : selections) {
                if (selection.startsWith("dev.fencing.benchmarks.")) {
                    continue; // a main class, checked below
                }
                checked++;
                problems.addAll(unmatched(file, selection, benchmarks));
            }
        }
        assertThat(checked).as("benchmark selections found in the page and the script").isGreaterThan(20);
        assertThat(problems).isEmpty();
    }

    @Test
    void everyBenchmarkTheScriptPairsExists() throws IOException {
        Path root = SnippetCheckTest.repositoryRoot();
        TreeSet<String> methods = new TreeSet<>();
        for (String benchmark : benchmarks(root)) {
            methods.add(benchmark.substring(benchmark.lastIndexOf('.') + 1));
        }
        String script = Files.readString(root.resolve("fencing-benchmarks/run-all.sh"))
                .replaceAll("(?m)(^|\\s)#.*$", "$1"); // comments, which name the options too
        List<String> problems = new ArrayList<>();
        int checked = 0;
        Matcher paired = PAIRED.matcher(script);
        while (paired.find()) {
            char separator = paired.group(1).equals("ratio") ? '/' : '-';
            String spec = paired.group(2);
            int at = spec.indexOf(separator);
            if (at < 0) {
                problems.add("run-all.sh: --" + paired.group(1) + " " + spec + " has no '" + separator + "'");
                continue;
            }
            for (String side : List.of(spec.substring(0, at), spec.substring(at + 1))) {
                String method = side.replaceAll("\\[.*$", "").replaceAll("#.*$", "");
                if (method.contains("$")) {
                    // a name the script completes in a loop: its fixed part must start a benchmark's name
                    String head = method.substring(0, method.indexOf('$'));
                    if (methods.stream().noneMatch(m -> m.startsWith(head))) {
                        problems.add("run-all.sh pairs '" + side + "': no benchmark starts with '" + head + "'");
                    }
                } else if (!methods.contains(method)) {
                    problems.add("run-all.sh pairs '" + side + "': no benchmark method " + method);
                }
                checked++;
            }
        }
        assertThat(checked).as("benchmarks paired by run-all.sh").isGreaterThan(20);
        assertThat(problems).isEmpty();
    }

    @Test
    void everyMainClassTheDocsAndTheScriptStartIsInTheBenchmarksModule() throws IOException {
        Path root = SnippetCheckTest.repositoryRoot();
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (String file : List.of("docs/benchmarks.md", "fencing-benchmarks/run-all.sh")) {
            Matcher main = MAIN_CLASS.matcher(Files.readString(root.resolve(file)));
            while (main.find()) {
                checked++;
                Path source = root.resolve(SOURCES).resolve(main.group(1).replace('.', '/') + ".java");
                if (!Files.isRegularFile(source)) {
                    problems.add(file + " starts " + main.group(1) + ", which has no source " + source);
                }
            }
        }
        assertThat(checked).as("main classes named").isPositive();
        assertThat(problems).isEmpty();
    }

    /** Every {@code package.Class.method} annotated {@code @Benchmark}, as JMH names it. */
    static List<String> benchmarks(Path root) throws IOException {
        List<String> names = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root.resolve(SOURCES))) {
            files.filter(p -> p.toString().endsWith(".java")).forEach(p -> {
                String relative = root.resolve(SOURCES).relativize(p).toString();
                String className = relative.substring(0, relative.length() - ".java".length()).replace('/', '.');
                Matcher method = BENCHMARK_METHOD.matcher(read(p));
                while (method.find()) {
                    names.add(className + "." + method.group(1));
                }
            });
        }
        return names;
    }

    /**
     * The alternatives of {@code selection} that select no benchmark, as problems. A selection made of literal text,
     * groups of alternatives and a final {@code $} is expanded, and each expansion must select at least one; any
     * other regex must select at least one as a whole.
     */
    static List<String> unmatched(String file, String selection, List<String> benchmarks) {
        Pattern whole;
        try {
            whole = Pattern.compile(selection);
        } catch (PatternSyntaxException e) {
            return List.of(file + ": '" + selection + "' is not a regex JMH accepts: " + e.getDescription());
        }
        boolean anchored = selection.endsWith("$") && !selection.endsWith("\\$");
        String body = anchored ? selection.substring(0, selection.length() - 1) : selection;
        List<String> alternatives = expand(body);
        if (alternatives == null) {
            return benchmarks.stream().anyMatch(b -> whole.matcher(b).find()) ? List.of()
                    : List.of(file + ": '" + selection + "' selects no benchmark");
        }
        List<String> problems = new ArrayList<>();
        for (String alternative : alternatives) {
            Pattern one = Pattern.compile(Pattern.quote(alternative) + (anchored ? "$" : ""));
            if (benchmarks.stream().noneMatch(b -> one.matcher(b).find())) {
                problems.add(file + ": '" + selection + "' selects no benchmark for its alternative '" + alternative
                        + "'");
            }
        }
        return problems;
    }

    /** The strings a regex of literals, {@code \.} and groups with {@code |} matches; {@code null} for others. */
    static List<String> expand(String regex) {
        int[] at = {0};
        List<String> result = alternation(regex, at);
        return result == null || at[0] != regex.length() ? null : result;
    }

    private static List<String> alternation(String regex, int[] at) {
        List<String> all = new ArrayList<>();
        while (true) {
            List<String> sequence = sequence(regex, at);
            if (sequence == null) {
                return null;
            }
            all.addAll(sequence);
            if (at[0] < regex.length() && regex.charAt(at[0]) == '|') {
                at[0]++;
                continue;
            }
            return all;
        }
    }

    private static List<String> sequence(String regex, int[] at) {
        List<String> prefixes = new ArrayList<>(List.of(""));
        while (at[0] < regex.length()) {
            char c = regex.charAt(at[0]);
            List<String> next;
            if (c == '|' || c == ')') {
                return prefixes;
            } else if (c == '(') {
                at[0]++;
                next = alternation(regex, at);
                if (next == null || at[0] >= regex.length() || regex.charAt(at[0]) != ')') {
                    return null;
                }
                at[0]++;
            } else if (c == '\\' && at[0] + 1 < regex.length() && regex.charAt(at[0] + 1) == '.') {
                at[0] += 2;
                next = List.of(".");
            } else if (Character.isLetterOrDigit(c) || c == '_') {
                at[0]++;
                next = List.of(String.valueOf(c));
            } else {
                return null; // any other metacharacter (and '.' unescaped): not expanded
            }
            List<String> joined = new ArrayList<>();
            for (String prefix : prefixes) {
                for (String tail : next) {
                    joined.add(prefix + tail);
                }
            }
            prefixes = joined;
        }
        return prefixes;
    }

    private static void collect(Matcher matcher, List<String> into) {
        while (matcher.find()) {
            for (int group = 1; group <= matcher.groupCount(); group++) {
                if (matcher.group(group) != null) {
                    into.add(matcher.group(group));
                }
            }
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
