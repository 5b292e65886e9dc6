package dev.fencing.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * README.md "Spring Boot": its coordinates are modules of this build at its version, the properties it shows are the
 * starter's (as spring-boot-configuration-processor generated them), and it names every property the starter has.
 */
class SpringBootDocsTest {

    private static final Pattern METADATA_NAME = Pattern.compile("\"name\"\\s*:\\s*\"(fencing\\.[^\"]+)\"");
    private static final Pattern GRADLE_COORDINATE = Pattern.compile("\"dev\\.fencing:([a-z\\-]+)(?::([^\"]+))?\"");
    private static final Pattern PROPERTY_LINE = Pattern.compile("^#?\\s*(fencing\\.[a-z0-9.\\-]+)\\s*=.*$");

    @Test
    void theCoordinatesAreModulesOfThisBuildAtItsVersion() throws Exception {
        Path root = SnippetCheckTest.repositoryRoot();
        Document parent = PomXml.parse(Files.newInputStream(root.resolve("pom.xml")));
        String version = PomXml.childText(parent.getDocumentElement(), "version");
        List<String> modules = new ArrayList<>();
        NodeList moduleNodes = parent.getElementsByTagName("module");
        for (int i = 0; i < moduleNodes.getLength(); i++) {
            modules.add(moduleNodes.item(i).getTextContent().trim());
        }
        Document snippet = PomXml.parse(SpringBootDocsTest.class.getResourceAsStream("spring-boot.xml"));
        NodeList dependencies = snippet.getElementsByTagName("dependency");
        assertThat(dependencies.getLength()).as("the BOM and the starter, nothing else").isEqualTo(2);
        for (int i = 0; i < dependencies.getLength(); i++) {
            Element dependency = (Element) dependencies.item(i);
            String artifactId = PomXml.childText(dependency, "artifactId");
            assertThat(PomXml.childText(dependency, "groupId")).isEqualTo("dev.fencing");
            assertThat(modules).as("modules of the parent pom").contains(artifactId);
            if (artifactId.equals("fencing-bom")) {
                assertThat(PomXml.childText(dependency, "version")).isEqualTo(version);
                assertThat(Files.readString(root.resolve("fencing-bom/pom.xml"))).as("the BOM manages the others")
                        .contains("<artifactId>fencing-spring-boot-starter</artifactId>",
                                "<artifactId>fencing-jdbc</artifactId>", "<artifactId>fencing-web</artifactId>");
            }
        }
    }

    @Test
    void theGradleCoordinatesAreTheMavenOnesWithTheBomAtTheBuildsVersion() throws Exception {
        Path root = SnippetCheckTest.repositoryRoot();
        String version = PomXml.childText(PomXml.parse(Files.newInputStream(root.resolve("pom.xml")))
                .getDocumentElement(), "version");
        Document snippet = PomXml.parse(SpringBootDocsTest.class.getResourceAsStream("spring-boot.xml"));
        TreeSet<String> maven = new TreeSet<>();
        NodeList artifactIds = snippet.getElementsByTagName("artifactId");
        for (int i = 0; i < artifactIds.getLength(); i++) {
            maven.add(artifactIds.item(i).getTextContent().trim());
        }
        TreeSet<String> gradle = new TreeSet<>();
        String kts;
        try (InputStream in = SpringBootDocsTest.class.getResourceAsStream("spring-boot.gradle.kts")) {
            kts = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Matcher matcher = GRADLE_COORDINATE.matcher(kts);
        while (matcher.find()) {
            gradle.add(matcher.group(1));
            if (matcher.group(1).equals("fencing-bom")) {
                assertThat(matcher.group(2)).as("the BOM's version in the Gradle snippet").isEqualTo(version);
            } else {
                assertThat(matcher.group(2)).as(matcher.group(1) + " takes its version from the BOM").isNull();
            }
        }
        assertThat(gradle).as("the Gradle snippet's artifacts and the Maven snippet's").isEqualTo(maven);
        assertThat(kts).contains("platform(\"dev.fencing:fencing-bom:");
    }

    @Test
    void everyPropertyHasADescriptionInTheMetadata() throws Exception {
        String json;
        try (InputStream in = SpringBootDocsTest.class.getClassLoader()
                .getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        for (String property : metadataProperties()) {
            int at = json.indexOf("\"name\": \"" + property + "\"");
            assertThat(at).as(property + " in the metadata").isNotNegative();
            int end = json.indexOf('}', at);
            assertThat(json.substring(at, end)).as(property + " has a description (its field's Javadoc)")
                    .contains("\"description\"")
                    .as(property + "'s description is plain text, as IDEs show it").doesNotContain("{@");
        }
    }

    @Test
    void theReadmeShowsExactlyTheStartersProperties() throws Exception {
        TreeSet<String> metadata = metadataProperties();
        assertThat(metadata).contains("fencing.enabled", "fencing.store.type");

        TreeSet<String> shown = new TreeSet<>();
        try (InputStream in = SpringBootDocsTest.class.getResourceAsStream("spring-boot.properties")) {
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                Matcher matcher = PROPERTY_LINE.matcher(line.trim());
                if (matcher.matches()) {
                    shown.add(mapProperty(matcher.group(1), metadata));
                }
            }
        }
        assertThat(shown).as("the properties README.md shows (spring-boot.properties) and the metadata")
                .isEqualTo(metadata);

        String readme = Files.readString(SnippetCheckTest.repositoryRoot().resolve("README.md"));
        for (String property : metadata) {
            assertThat(readme).as("README.md names " + property).contains(property);
        }
    }

    /**
     * The metadata property {@code shown} sets: itself, or the map property it is an entry of
     * ({@code fencing.signing.keys.ID.secret} sets {@code fencing.signing.keys}, a {@code java.util.Map}).
     */
    private static String mapProperty(String shown, TreeSet<String> metadata) throws Exception {
        if (metadata.contains(shown)) {
            return shown;
        }
        String json;
        try (InputStream in = SpringBootDocsTest.class.getClassLoader()
                .getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        for (String property : metadata) {
            int at = json.indexOf("\"name\": \"" + property + "\"");
            if (shown.startsWith(property + ".") && at >= 0
                    && json.substring(at, json.indexOf('}', at)).contains("\"type\": \"java.util.Map<")) {
                return property;
            }
        }
        return shown;
    }

    private static TreeSet<String> metadataProperties() throws Exception {
        try (InputStream in = SpringBootDocsTest.class.getClassLoader()
                .getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("the starter's generated metadata on the classpath").isNotNull();
            String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            int start = json.indexOf("\"properties\"");
            int end = json.indexOf("\"hints\"", start);
            String properties = json.substring(start, end < 0 ? json.length() : end);
            TreeSet<String> names = new TreeSet<>();
            Matcher matcher = METADATA_NAME.matcher(properties);
            while (matcher.find()) {
                names.add(matcher.group(1));
            }
            return names;
        }
    }
}
