package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.GeneratedFiles;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.javapoet.ClassName;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * AOT processing records the decisions the build's {@code fencing.*} properties took (found through
 * {@code aot.factories}, with no secret in them), and an AOT-processed application that runs with properties deciding
 * otherwise fails to start naming each: a signing key set only where it runs would otherwise be ignored (forged
 * tokens accepted), an in-memory store of the build kept (a zombie's write accepted).
 */
class AotProcessingTest {

    private static final String SECRET = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldC0xMjM0NTY3OA==";

    private static StandardEnvironment environment(Map<String, Object> properties) {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new MapPropertySource("test", new HashMap<>(properties)));
        return environment;
    }

    private static String processAheadOfTime(Map<String, Object> properties) throws Exception {
        GenericApplicationContext context = new GenericApplicationContext();
        context.setEnvironment(environment(properties));
        InMemoryGeneratedFiles files = new InMemoryGeneratedFiles();
        DefaultGenerationContext generation = new DefaultGenerationContext(
                new ClassNameGenerator(ClassName.get("com.example", "Application")), files);
        new ApplicationContextAotGenerator().processAheadOfTime(context, generation);
        generation.writeGeneratedContent();
        return files.getGeneratedFileContent(GeneratedFiles.Kind.RESOURCE, AotDecisions.RESOURCE);
    }

    @Test
    void theBuildsDecisionsAreRecordedWithoutTheirValues() throws Exception {
        String recorded = processAheadOfTime(Map.of("fencing.store.type", "in-memory",
                "fencing.signing.current-key-id", "k1", "fencing.signing.keys.k1.secret", SECRET,
                "fencing.web.filter.url-patterns", "/internal/*"));
        Map<String, String> decisions = AotDecisions.parse(recorded);
        assertThat(decisions).containsEntry("fencing.store.type", "in-memory")
                .containsEntry("fencing.issuer.type", "none")
                .containsEntry("fencing.signing (keys or scheme)", "set")
                .containsEntry("fencing.signing (current-key-id with its secret or private-key)", "set")
                .containsEntry("fencing.web.filter.url-patterns", "set")
                .containsEntry("fencing.enabled", "true");
        assertThat(recorded).doesNotContain(SECRET).doesNotContain("/internal/*").doesNotContain("k1");
    }

    @Test
    void runningWithPropertiesThatDecideOtherwiseFailsNamingEach() throws Exception {
        Map<String, String> built = AotDecisions.parse(processAheadOfTime(Map.of("fencing.store.type", "in-memory")));
        Map<String, String> now = AotDecisions.of(environment(Map.of("fencing.signing.current-key-id", "k1",
                "fencing.signing.keys.k1.secret", SECRET)));
        assertThatThrownBy(() -> FencingAotCheck.check(built, now))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("fencing.store.type: built with in-memory, runs with jdbc")
                .hasMessageContaining("fencing.signing (keys or scheme): built with not set, runs with set")
                .hasMessageContaining("spring-boot:process-aot")
                .hasMessageNotContaining(SECRET);
        FencingAotCheck.check(built, AotDecisions.of(environment(Map.of("fencing.store.type", "IN_MEMORY",
                "fencing.store.jdbc.table", "other_table")))); // the same decisions: starts
    }

    @Test
    void theCheckRunsInAnAotProcessedApplicationOnlyAndReadsTheBuildsResource(@TempDir Path generated)
            throws Exception {
        Path resource = generated.resolve(AotDecisions.RESOURCE);
        Files.createDirectories(resource.getParent());
        Files.writeString(resource, processAheadOfTime(Map.of()));
        try (URLClassLoader classLoader = new URLClassLoader(new URL[] {generated.toUri().toURL()},
                getClass().getClassLoader())) {
            GenericApplicationContext context = new GenericApplicationContext();
            context.setClassLoader(classLoader);
            context.setEnvironment(environment(Map.of("fencing.issuer.offset.base", "1000000")));
            new FencingAotCheck(() -> false).initialize(context); // not AOT-processed: not checked
            assertThatThrownBy(() -> new FencingAotCheck(() -> true).initialize(context))
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("fencing.issuer.offset.base: built with not set, runs with set");

            GenericApplicationContext unrecorded = new GenericApplicationContext();
            unrecorded.setClassLoader(new URLClassLoader(new URL[0], null));
            unrecorded.setEnvironment(environment(Map.of()));
            assertThatThrownBy(() -> new FencingAotCheck(() -> true).initialize(unrecorded))
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining(AotDecisions.RESOURCE + " is missing");
        }
    }
}
