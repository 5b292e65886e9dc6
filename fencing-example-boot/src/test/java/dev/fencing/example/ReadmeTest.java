package dev.fencing.example;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The configuration the README shows is the application.yml the application runs with. */
class ReadmeTest {

    @Test
    void theReadmeShowsTheApplicationYamlAsItIs() throws Exception {
        String readme = Files.readString(Path.of("README.md"));
        int start = readme.indexOf("```yaml\n");
        assertThat(start).as("README.md has a yaml block").isNotNegative();
        int end = readme.indexOf("```", start + 8);
        String shown = readme.substring(start + 8, end);
        String yaml = Files.readString(Path.of("src/main/resources/application.yml"));
        assertThat(shown).as("README.md's yaml block, to be replaced by application.yml").isEqualTo(yaml);
        assertThat(yaml.lines().dropWhile(line -> !line.equals("fencing:")).skip(1)
                .takeWhile(line -> line.startsWith("  ")).count())
                .as("fencing.* lines: the whole fencing configuration fits in three").isLessThanOrEqualTo(3);
    }
}
