package dev.fencing.docs;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The BOM has no parent (importing it must bring only fencing's versions), so it pins the plugins a pom-packaged
 * project runs itself; they must be the parent's versions, so a version is still chosen in one place.
 */
@Timeout(30)
class BomPluginVersionsTest {

    @Test
    void theBomPinsItsLifecyclePluginsAtTheParentsVersions() throws Exception {
        Path root = SnippetCheckTest.repositoryRoot();
        Map<String, String> bom = managedPlugins(root.resolve("fencing-bom/pom.xml"));
        Map<String, String> parent = managedPlugins(root.resolve("pom.xml"));
        assertThat(bom).as("the BOM's pinned plugins").containsOnlyKeys("maven-clean-plugin", "maven-install-plugin",
                "maven-deploy-plugin");
        bom.forEach((plugin, version) -> assertThat(version)
                .as(plugin + " in fencing-bom/pom.xml is at the parent's version").isEqualTo(parent.get(plugin)));
    }

    private static Map<String, String> managedPlugins(Path pom) throws Exception {
        Document document = PomXml.parse(Files.newInputStream(pom));
        Map<String, String> versions = new TreeMap<>();
        NodeList management = document.getElementsByTagName("pluginManagement");
        if (management.getLength() == 0) {
            return versions;
        }
        NodeList plugins = ((Element) management.item(0)).getElementsByTagName("plugin");
        for (int i = 0; i < plugins.getLength(); i++) {
            Element plugin = (Element) plugins.item(i);
            versions.put(PomXml.childText(plugin, "artifactId"), PomXml.childText(plugin, "version"));
        }
        return versions;
    }
}
