package dev.fencing.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** The Maven coordinates the README gives are the ones this build produces. */
class GettingItTest {

    @Test
    void theReadmeCoordinatesAreModulesOfThisBuildAtItsVersion() throws Exception {
        Path root = SnippetCheckTest.repositoryRoot();
        Document parent = PomXml.parse(Files.newInputStream(root.resolve("pom.xml")));
        String version = PomXml.childText(parent.getDocumentElement(), "version");
        String groupId = PomXml.childText(parent.getDocumentElement(), "groupId");
        List<String> modules = new ArrayList<>();
        NodeList moduleNodes = parent.getElementsByTagName("module");
        for (int i = 0; i < moduleNodes.getLength(); i++) {
            modules.add(moduleNodes.item(i).getTextContent().trim());
        }

        Document snippet = PomXml.parse(GettingItTest.class.getResourceAsStream("getting-it.xml"));
        NodeList dependencies = snippet.getElementsByTagName("dependency");
        assertThat(dependencies.getLength()).as("dependencies in getting-it.xml").isPositive();
        for (int i = 0; i < dependencies.getLength(); i++) {
            Element dependency = (Element) dependencies.item(i);
            String artifactId = PomXml.childText(dependency, "artifactId");
            assertThat(PomXml.childText(dependency, "groupId")).isEqualTo(groupId);
            assertThat(PomXml.childText(dependency, "version")).as(artifactId).isEqualTo(version);
            assertThat(modules).as("modules of the parent pom").contains(artifactId);
            String modulePom = Files.readString(root.resolve(artifactId).resolve("pom.xml"));
            assertThat(modulePom).as(artifactId + " is published").doesNotContain("<maven.deploy.skip>true");
        }
    }
}
