package dev.fencing.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The code in the docs is code that compiles and runs. Every fenced block in README.md and docs/**.md whose language
 * is not a shell or plain output ({@code bash}, {@code sh}, {@code shell}, {@code console}, {@code text}, none) must
 * follow a marker line
 *
 * <pre>{@code <!-- snippet: path/from/the/repository/root/File.java#region -->}</pre>
 *
 * naming a file and a region in it, delimited by lines containing {@code tag::region[]} and {@code end::region[]}
 * (in whatever comment syntax the file has: {@code //}, {@code <!-- -->}, {@code --}, {@code #}); without
 * {@code #region} the whole file is meant. Lines inside the region that carry another {@code tag::}/{@code end::} are
 * left out. Block and region are compared line by line, each line trimmed and its inner whitespace collapsed, blank
 * lines ignored. A block that differs, a block without a marker, a marker without a block, a missing file or region
 * fails the build, with the region's text to paste.
 */
class SnippetCheckTest {

    private static final Set<String> EXEMPT = Set.of("", "bash", "sh", "shell", "console", "text");
    private static final Pattern MARKER =
            Pattern.compile("^\\s*<!--\\s*snippet:\\s*([^#\\s]+)(?:#(\\S+))?\\s*-->\\s*$");
    private static final Pattern FENCE = Pattern.compile("^\\s*(`{3,}|~{3,})\\s*([^\\s`]*).*$");

    @Test
    void everyCodeBlockInTheDocsIsItsSourceRegion() throws IOException {
        Path root = repositoryRoot();
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (Path markdown : markdownFiles(root)) {
            Result result = check(root, root.relativize(markdown).toString(), Files.readString(markdown));
            problems.addAll(result.problems());
            checked += result.checked();
        }
        assertThat(problems).as("code blocks in the docs that are not their source (%d checked)", checked).isEmpty();
        assertThat(checked).as("checked blocks").isGreaterThanOrEqualTo(10);
    }

    @Test
    void everyRelativeLinkInTheDocsNamesAFileThatExists() throws IOException {
        Path root = repositoryRoot();
        Pattern link = Pattern.compile("\\]\\(([^)#\\s]+)(?:#[^)\\s]*)?\\)");
        List<String> broken = new ArrayList<>();
        for (Path markdown : markdownFiles(root)) {
            Matcher matcher = link.matcher(Files.readString(markdown));
            while (matcher.find()) {
                String target = matcher.group(1);
                if (!target.matches("[a-z]+:.*") && !Files.exists(markdown.getParent().resolve(target))) {
                    broken.add(root.relativize(markdown) + ": " + target);
                }
            }
        }
        assertThat(broken).as("links to files that do not exist").isEmpty();
    }

    @Test
    void aChangedLineFails() {
        Path root = repositoryRoot();
        String marker = "<!-- snippet: "
                + "fencing-docs-check/src/test/java/dev/fencing/docs/usage/UsageExampleTest.java#bind -->";
        String same = marker + "\n```java\ntry (FencingScope scope = FencingContext.bind(lease.token())) {\n"
                + "        repository.deposit(42,   100);\n}\n```\n";
        assertThat(check(root, "same.md", same).problems()).isEmpty();
        String changed = same.replace("42,   100", "42, 100L");
        assertThat(check(root, "changed.md", changed).problems()).singleElement().asString()
                .contains("changed.md:2", "differs from", "UsageExampleTest.java#bind", "deposit(42, 100);");
    }

    @Test
    void aJavaBlockWithoutMarkerFailsAndShellAndOutputBlocksAreExempt() {
        Path root = repositoryRoot();
        String text = "```bash\nmvn -B verify\n```\n\n```text\nok\n```\n\n```\nplain\n```\n\n```java\nint x;\n```\n";
        assertThat(check(root, "doc.md", text).problems()).singleElement().asString()
                .contains("doc.md:13", "java block without a snippet marker");
    }

    @Test
    void aMissingRegionOrAnOrphanMarkerFails() {
        Path root = repositoryRoot();
        String missing = "<!-- snippet: fencing-docs-check/pom.xml#nothing -->\n```xml\n<a/>\n```\n";
        assertThat(check(root, "m.md", missing).problems()).singleElement().asString().contains("no region 'nothing'");
        String orphan = "<!-- snippet: fencing-docs-check/pom.xml -->\n\nText.\n";
        assertThat(check(root, "o.md", orphan).problems()).singleElement().asString().contains("not followed by");
    }

    record Result(List<String> problems, int checked) {
    }

    static Result check(Path root, String name, String markdown) {
        List<String> problems = new ArrayList<>();
        int checked = 0;
        String[] lines = markdown.split("\r?\n", -1);
        Matcher pending = null;
        int pendingLine = 0;
        for (int i = 0; i < lines.length; i++) {
            Matcher marker = MARKER.matcher(lines[i]);
            if (marker.matches()) {
                if (pending != null) {
                    problems.add(name + ":" + pendingLine + ": snippet marker not followed by a code block");
                }
                pending = marker;
                pendingLine = i + 1;
                continue;
            }
            Matcher fence = FENCE.matcher(lines[i]);
            if (!fence.matches()) {
                if (pending != null && !lines[i].isBlank()) {
                    problems.add(name + ":" + pendingLine + ": snippet marker not followed by a code block");
                    pending = null;
                }
                continue;
            }
            String delimiter = fence.group(1);
            String language = fence.group(2).toLowerCase();
            int start = i + 1;
            List<String> block = new ArrayList<>();
            i++;
            while (i < lines.length && !lines[i].trim().startsWith(delimiter)) {
                block.add(lines[i]);
                i++;
            }
            if (pending == null) {
                if (!EXEMPT.contains(language)) {
                    problems.add(name + ":" + start + ": " + language
                            + " block without a snippet marker (<!-- snippet: path#region --> on the line before)");
                }
                continue;
            }
            String path = pending.group(1);
            String region = pending.group(2);
            pending = null;
            checked++;
            String source = path + (region == null ? "" : "#" + region);
            List<String> expected;
            try {
                expected = region(root.resolve(path), region);
            } catch (IllegalArgumentException e) {
                problems.add(name + ":" + start + ": " + source + ": " + e.getMessage());
                continue;
            }
            if (!normalize(block).equals(normalize(expected))) {
                problems.add(name + ":" + start + ": the " + language + " block differs from " + source
                        + "; the region reads:\n" + String.join("\n", dedent(expected)));
            }
        }
        if (pending != null) {
            problems.add(name + ":" + pendingLine + ": snippet marker not followed by a code block");
        }
        return new Result(problems, checked);
    }

    static List<String> region(Path file, String region) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the file (" + e + ")");
        }
        if (region == null) {
            return lines;
        }
        String open = "tag::" + region + "[]";
        String close = "end::" + region + "[]";
        int from = -1;
        int to = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(open)) {
                if (from >= 0) {
                    throw new IllegalArgumentException("region '" + region + "' opens twice");
                }
                from = i;
            } else if (lines.get(i).contains(close) && from >= 0 && to < 0) {
                to = i;
            }
        }
        if (from < 0 || to < 0) {
            throw new IllegalArgumentException("no region '" + region + "' (lines with " + open + " and "
                    + close + ")");
        }
        return lines.subList(from + 1, to).stream()
                .filter(line -> !line.contains("tag::") && !line.contains("end::"))
                .collect(Collectors.toList());
    }

    private static List<String> normalize(List<String> lines) {
        return lines.stream().map(line -> line.trim().replaceAll("\\s+", " ")).filter(line -> !line.isEmpty()).toList();
    }

    private static List<String> dedent(List<String> lines) {
        int indent = lines.stream().filter(line -> !line.isBlank())
                .mapToInt(line -> line.length() - line.stripLeading().length()).min().orElse(0);
        return lines.stream().map(line -> line.isBlank() ? "" : line.substring(indent)).toList();
    }

    static List<Path> markdownFiles(Path root) throws IOException {
        List<Path> files = new ArrayList<>();
        files.add(root.resolve("README.md"));
        try (Stream<Path> docs = Files.walk(root.resolve("docs"))) {
            docs.filter(path -> path.toString().endsWith(".md")).sorted().forEach(files::add);
        }
        return files;
    }

    /** The repository root: the nearest directory up from the working directory with this module in it. */
    static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            if (Files.isDirectory(dir.resolve("fencing-docs-check")) && Files.isRegularFile(dir.resolve("README.md"))) {
                return dir;
            }
            dir = dir.getParent();
        }
        throw new UncheckedIOException(new IOException("no repository root above " + Path.of("").toAbsolutePath()));
    }
}
