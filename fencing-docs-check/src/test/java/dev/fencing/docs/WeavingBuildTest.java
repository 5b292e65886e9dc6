package dev.fencing.docs;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The compile-time weaving build docs/weaving.md shows (weaving-ctw.xml) is the one this project weaves with: the
 * same aspectj-maven-plugin and AspectJ versions as the parent pom, and fencing-aspect, a published module, as the
 * aspect library. The project's own woven modules (fencing-it-ctw) use that plugin the same way.
 */
class WeavingBuildTest {

    @Test
    void theDocumentedWeavingBuildUsesThisBuildsPluginAndAspectJVersions() throws Exception {
        Path root = SnippetCheckTest.repositoryRoot();
        Document parent = PomXml.parse(Files.newInputStream(root.resolve("pom.xml")));
        String aspectjVersion = parent.getElementsByTagName("aspectj.version").item(0).getTextContent().trim();
        String pluginVersion = null;
        NodeList plugins = parent.getElementsByTagName("plugin");
        for (int i = 0; i < plugins.getLength(); i++) {
            Element plugin = (Element) plugins.item(i);
            if ("aspectj-maven-plugin".equals(PomXml.childText(plugin, "artifactId"))
                    && PomXml.childText(plugin, "version") != null) {
                pluginVersion = PomXml.childText(plugin, "version");
            }
        }
        assertThat(pluginVersion).as("the parent pom manages aspectj-maven-plugin").isNotNull();

        Document shown = PomXml.parse(WeavingBuildTest.class.getResourceAsStream("weaving-ctw.xml"));
        Element plugin = (Element) shown.getElementsByTagName("plugin").item(0);
        assertThat(PomXml.childText(plugin, "groupId")).isEqualTo("dev.aspectj");
        assertThat(PomXml.childText(plugin, "version")).isEqualTo(pluginVersion);
        Element compile = null;
        Element testCompile = null;
        NodeList executions = plugin.getElementsByTagName("execution");
        for (int i = 0; i < executions.getLength(); i++) {
            Element execution = (Element) executions.item(i);
            String goal = PomXml.childText((Element) execution.getElementsByTagName("goals").item(0), "goal");
            if ("compile".equals(goal)) {
                compile = execution;
            } else if ("test-compile".equals(goal)) {
                testCompile = execution;
            }
        }
        assertThat(compile).as("an execution that weaves the main classes").isNotNull();
        assertThat(testCompile).as("an execution that weaves the test classes").isNotNull();
        assertThat(PomXml.childText((Element) compile.getElementsByTagName("configuration").item(0),
                "forceAjcCompile")).as("without it, a build whose javac recompiled classes leaves them unwoven")
                .isEqualTo("true");
        assertThat(testCompile.getElementsByTagName("forceAjcCompile").getLength())
                .as("forced on test-compile, ajc fails a project without test sources ('no sources specified')")
                .isZero();
        assertThat(((Element) plugin.getElementsByTagName("configuration").item(0))
                .getElementsByTagName("forceAjcCompile").getLength())
                .as("the plugin-wide configuration reaches test-compile too").isZero();
        Element tools = (Element) shown.getElementsByTagName("dependency").item(0);
        assertThat(PomXml.childText(tools, "artifactId")).isEqualTo("aspectjtools");
        assertThat(PomXml.childText(tools, "version")).isEqualTo(aspectjVersion);
        Element library = (Element) shown.getElementsByTagName("aspectLibrary").item(0);
        assertThat(PomXml.childText(library, "groupId"))
                .isEqualTo(PomXml.childText(parent.getDocumentElement(), "groupId"));
        assertThat(PomXml.childText(library, "artifactId")).isEqualTo("fencing-aspect");
        assertThat(Files.readString(root.resolve("fencing-aspect/pom.xml")))
                .as("fencing-aspect is published").doesNotContain("<maven.deploy.skip>true");
        assertThat(Files.readString(root.resolve("fencing-it-ctw/pom.xml")))
                .as("the project's own compile-time-woven module weaves with fencing-aspect as its library")
                .contains("<artifactId>aspectj-maven-plugin</artifactId>").contains("<aspectLibrary>")
                .contains("<artifactId>fencing-aspect</artifactId>");
    }
}
