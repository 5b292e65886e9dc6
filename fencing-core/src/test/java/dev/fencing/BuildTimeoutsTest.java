package dev.fencing;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * CI cannot hang: every module with tests sets a JUnit default timeout, and the parent POM gives Surefire a fork
 * timeout. Reads the build files of the checkout this module sits in.
 */
class BuildTimeoutsTest {

    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();

    private static List<String> modules() throws IOException {
        String pom = Files.readString(ROOT.resolve("pom.xml"));
        Matcher m = Pattern.compile("<module>([^<]+)</module>").matcher(pom);
        List<String> modules = new ArrayList<>();
        while (m.find()) {
            modules.add(m.group(1).strip());
        }
        return modules;
    }

    @Test
    void everyModuleWithTestsHasAJUnitDefaultTimeout() throws IOException {
        List<String> modules = modules();
        assertThat(modules).contains("fencing-core", "fencing-web");
        int checked = 0;
        for (String module : modules) {
            Path dir = ROOT.resolve(module);
            if (!Files.isDirectory(dir.resolve("src/test/java"))) {
                continue;
            }
            Path file = dir.resolve("src/test/resources/junit-platform.properties");
            assertThat(file).as(module + " has tests, so it needs " + file).exists();
            Properties properties = new Properties();
            try (Reader reader = Files.newBufferedReader(file)) {
                properties.load(reader);
            }
            String timeout = properties.getProperty("junit.jupiter.execution.timeout.default");
            assertThat(timeout).as(module + ": junit.jupiter.execution.timeout.default").isNotBlank();
            assertThat(parse(timeout)).as(module + ": " + timeout)
                    .isPositive().isLessThanOrEqualTo(Duration.ofMinutes(5));
            checked++;
        }
        assertThat(checked).isGreaterThanOrEqualTo(5);
    }

    @Test
    void surefireKillsAForkThatRunsTooLong() throws IOException {
        String pom = Files.readString(ROOT.resolve("pom.xml"));
        int surefire = pom.indexOf("<artifactId>maven-surefire-plugin</artifactId>");
        assertThat(surefire).isPositive();
        String config = pom.substring(surefire, pom.indexOf("</plugin>", surefire));
        Matcher timeout = Pattern.compile("<forkedProcessTimeoutInSeconds>(\\d+)<").matcher(config);
        assertThat(timeout.find()).as("forkedProcessTimeoutInSeconds in the parent's surefire configuration").isTrue();
        assertThat(Integer.parseInt(timeout.group(1))).isBetween(60, 1800);
        assertThat(config).contains("<forkedProcessExitTimeoutInSeconds>");
    }

    /** JUnit's duration syntax: a number and an optional unit (ns, μs, ms, s, m, h, d; seconds by default). */
    private static Duration parse(String value) {
        Matcher m = Pattern.compile("(?i)\\s*(\\d+)\\s*(ns|μs|ms|s|m|h|d)?\\s*").matcher(value);
        assertThat(m.matches()).as("JUnit duration '" + value + "'").isTrue();
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2).toLowerCase();
        return switch (unit) {
            case "ns" -> Duration.ofNanos(n);
            case "μs" -> Duration.ofNanos(n * 1000);
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofDays(n);
        };
    }
}
