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
        Document parent = parse(Files.newInputStream(root.resolve("pom.xml")));
        String version = childText(parent.getDocumentElement(), "version");
        String groupId = childText(parent.getDocumentElement(), "groupId");
        List<String> modules = new ArrayList<>();
        NodeList moduleNodes = parent.getElementsByTagName("module");
        for (int i = 0; i < moduleNodes.getLength(); i++) {
            modules.add(moduleNodes.item(i).getTextContent().trim());
        }

        Document snippet = parse(GettingItTest.class.getResourceAsStream("getting-it.xml"));
        NodeList dependencies = snippet.getElementsByTagName("dependency");
        assertThat(dependencies.getLength()).isEqualTo(2);
        for (int i = 0; i < dependencies.getLength(); i++) {
            Element dependency = (Element) dependencies.item(i);
            String artifactId = childText(dependency, "artifactId");
            assertThat(childText(dependency, "groupId")).isEqualTo(groupId);
            assertThat(childText(dependency, "version")).as(artifactId).isEqualTo(version);
            assertThat(modules).as("modules of the parent pom").contains(artifactId);
            String modulePom = Files.readString(root.resolve(artifactId).resolve("pom.xml"));
            assertThat(modulePom).as(artifactId + " is published").doesNotContain("<maven.deploy.skip>true");
        }
    }

    private static Document parse(InputStream in) throws Exception {
        try (in) {
            return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(in);
        }
    }

    private static String childText(Element parent, String name) {
        NodeList children = parent.getChildNodes();
        for (int i = 0; i < children.getLength(); i++) {
            if (children.item(i) instanceof Element child && child.getTagName().equals(name)) {
                return child.getTextContent().trim();
            }
        }
        throw new AssertionError("no <" + name + "> in <" + parent.getTagName() + ">");
    }
}
