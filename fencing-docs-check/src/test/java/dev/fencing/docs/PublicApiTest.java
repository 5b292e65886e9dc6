package dev.fencing.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.NodeList;

/**
 * Keeps the public API no wider than approved, and docs/modules.md naming all of it. For every published module of
 * the build (a module of the parent pom without {@code maven.deploy.skip}), the public types of its compiled classes
 * (top-level public types, and public or protected member types of those) must equal the approved list in
 * {@code src/test/resources/api/<module>.txt}, and the "Public types" section of docs/modules.md must list exactly
 * the same types, module by module.
 *
 * <p>After an intended change (a new, renamed or hidden type), paste the content the failure prints into the file it
 * names, or run {@code mvn -pl fencing-docs-check -am verify -Dtest=PublicApiTest
 * -Dsurefire.failIfNoSpecifiedTests=false -Dapi.update=true}, which writes the approved lists and the docs section,
 * then review the diff.
 */
class PublicApiTest {

    private static final String SECTION_START = "<!-- public-types:start (PublicApiTest) -->";
    private static final String SECTION_END = "<!-- public-types:end -->";
    private static final Pattern ANONYMOUS = Pattern.compile(".*\\$\\d.*");

    @Test
    void eachPublishedModuleExposesExactlyItsApprovedTypes() throws Exception {
        Path root = SnippetCheckTest.repositoryRoot();
        Map<String, List<String>> actual = publicTypesByModule(root);
        boolean update = Boolean.getBoolean("api.update");
        List<String> failures = new ArrayList<>();
        for (Map.Entry<String, List<String>> module : actual.entrySet()) {
            Path approvedFile = approvedFile(root, module.getKey());
            String expected = approvedText(module.getKey(), module.getValue());
            String approved = Files.exists(approvedFile) ? Files.readString(approvedFile) : "";
            if (approved.equals(expected)) {
                continue;
            }
            if (update) {
                Files.createDirectories(approvedFile.getParent());
                Files.writeString(approvedFile, expected);
                continue;
            }
            failures.add("The public types of " + module.getKey() + " differ from the approved list "
                    + root.relativize(approvedFile) + ":\n" + diff(types(approved), module.getValue())
                    + "\nIf the change is intended, make " + root.relativize(approvedFile) + " exactly:\n"
                    + "----8<----\n" + expected + "----8<----\n");
        }
        Files.createDirectories(approvedFile(root, "x").getParent());
        try (Stream<Path> files = Files.list(approvedFile(root, "x").getParent())) {
            for (Path file : files.toList()) {
                String module = file.getFileName().toString().replaceFirst("\\.txt$", "");
                if (!actual.containsKey(module)) {
                    failures.add(root.relativize(file) + " approves the API of " + module
                            + ", which is not a published module of this build: delete it");
                }
            }
        }
        if (!failures.isEmpty()) {
            throw new AssertionError(String.join("\n", failures));
        }
    }

    @Test
    void modulesPageListsEveryPublicType() throws Exception {
        Path root = SnippetCheckTest.repositoryRoot();
        Path page = root.resolve("docs/modules.md");
        String text = Files.readString(page);
        int start = text.indexOf(SECTION_START);
        int end = text.indexOf(SECTION_END);
        assertThat(start).as("docs/modules.md has the line " + SECTION_START).isNotNegative();
        assertThat(end).as("docs/modules.md has the line " + SECTION_END).isGreaterThan(start);
        String listed = text.substring(start + SECTION_START.length(), end);
        String expected = "\n" + docsSection(publicTypesByModule(root));
        if (listed.equals(expected)) {
            return;
        }
        if (Boolean.getBoolean("api.update")) {
            Files.writeString(page, text.substring(0, start + SECTION_START.length()) + expected + text.substring(end));
            return;
        }
        throw new AssertionError("docs/modules.md does not list the public types of the published modules as "
                + "they are; replace the lines between " + SECTION_START + " and " + SECTION_END + " with:\n"
                + "----8<----" + expected + "----8<----");
    }

    /** Module to its public types (canonical names, sorted), for every published module, in build order. */
    static Map<String, List<String>> publicTypesByModule(Path root) throws Exception {
        Map<String, List<String>> byModule = new LinkedHashMap<>();
        for (String module : publishedModules(root)) {
            Path classes = root.resolve(module).resolve("target/classes");
            if (!Files.exists(root.resolve(module).resolve("src/main"))) {
                byModule.put(module, List.of());   // dependencies only, such as the Spring Boot starter
                continue;
            }
            assertThat(classes).as("compiled classes of " + module + " (build it first)").isDirectory();
            TreeSet<String> types = new TreeSet<>();
            try (Stream<Path> files = Files.walk(classes)) {
                for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                    String name = classes.relativize(file).toString().replace(file.getFileSystem().getSeparator(), ".")
                            .replaceFirst("\\.class$", "");
                    if (name.endsWith("module-info") || name.endsWith("package-info")
                            || ANONYMOUS.matcher(name).matches()) {
                        continue;
                    }
                    Class<?> type = Class.forName(name, false, PublicApiTest.class.getClassLoader());
                    if (isApi(type)) {
                        types.add(type.getCanonicalName());
                    }
                }
            }
            byModule.put(module, new ArrayList<>(types));
        }
        return byModule;
    }

    /** Public, or a public or protected member of an API type; never synthetic, local or anonymous. */
    private static boolean isApi(Class<?> type) {
        if (type.isSynthetic() || type.isAnonymousClass() || type.isLocalClass()) {
            return false;
        }
        Class<?> enclosing = type.getEnclosingClass();
        if (enclosing == null) {
            return Modifier.isPublic(type.getModifiers());
        }
        int modifiers = type.getModifiers();
        return (Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers)) && isApi(enclosing);
    }

    private static List<String> publishedModules(Path root) throws Exception {
        Document parent;
        try (InputStream in = Files.newInputStream(root.resolve("pom.xml"))) {
            parent = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(in);
        }
        List<String> modules = new ArrayList<>();
        NodeList moduleNodes = parent.getElementsByTagName("module");
        for (int i = 0; i < moduleNodes.getLength(); i++) {
            String module = moduleNodes.item(i).getTextContent().trim();
            String pom = Files.readString(root.resolve(module).resolve("pom.xml"));
            if (!pom.contains("<maven.deploy.skip>true") && !pom.contains("<packaging>pom</packaging>")) {
                modules.add(module);
            }
        }
        return modules;
    }

    private static Path approvedFile(Path root, String module) {
        return root.resolve("fencing-docs-check/src/test/resources/api").resolve(module + ".txt");
    }

    private static String approvedText(String module, List<String> types) {
        return "# The public types of " + module + ", one per line. PublicApiTest fails when the compiled module\n"
                + "# differs; the failure prints the new content (or run it with -Dapi.update=true).\n"
                + types.stream().map(t -> t + "\n").collect(Collectors.joining());
    }

    private static List<String> types(String approved) {
        return approved.lines().map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
    }

    private static String diff(List<String> approved, List<String> actual) {
        StringBuilder out = new StringBuilder();
        actual.stream().filter(t -> !approved.contains(t))
                .forEach(t -> out.append("  + ").append(t).append(" (public, not approved)\n"));
        approved.stream().filter(t -> !actual.contains(t))
                .forEach(t -> out.append("  - ").append(t).append(" (approved, no longer public)\n"));
        return out.length() == 0 ? "  (same types, different file text)\n" : out.toString();
    }

    /**
     * The docs section: per module a heading, then one line per package with its types' names relative to the
     * package ({@code FenceGuard.Proceed} for a member type).
     */
    static String docsSection(Map<String, List<String>> byModule) {
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, List<String>> module : byModule.entrySet()) {
            out.append("\n### `").append(module.getKey()).append("`\n\n");
            Map<String, List<String>> byPackage = new TreeMap<>();
            for (String type : module.getValue()) {
                String pkg = packageOf(type);
                byPackage.computeIfAbsent(pkg, p -> new ArrayList<>()).add(type.substring(pkg.length() + 1));
            }
            byPackage.forEach((pkg, names) -> out.append("- `").append(pkg).append("`: ")
                    .append(names.stream().map(n -> "`" + n + "`").collect(Collectors.joining(", "))).append('\n'));
        }
        return out.append('\n').toString();
    }

    /** The package of a canonical name: the segments before the first one that starts with an upper-case letter. */
    private static String packageOf(String canonicalName) {
        Matcher firstType = Pattern.compile("\\.[A-Z]").matcher(canonicalName);
        return firstType.find() ? canonicalName.substring(0, firstType.start()) : canonicalName;
    }
}
