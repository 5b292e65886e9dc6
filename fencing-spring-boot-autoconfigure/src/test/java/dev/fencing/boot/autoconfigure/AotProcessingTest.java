package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.spring.support.FencingNotEnabledCheck;
import org.junit.jupiter.api.Test;
import org.springframework.aot.test.generate.TestGenerationContext;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.test.tools.TestCompiler;
import org.springframework.javapoet.ClassName;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * AOT processing, its generated code compiled and run as an AOT-processed application runs it: the code registers
 * the decisions the build's {@code fencing.*} properties took (found through {@code aot.factories}, no secret in
 * them), and the context fails to start when the properties it runs with decide otherwise, naming each: a signing key
 * set only where it runs would otherwise be ignored (forged tokens accepted), an in-memory store of the build kept (a
 * zombie's write accepted).
 */
class AotProcessingTest {

    private static final String SECRET = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldC0xMjM0NTY3OA==";

    private static StandardEnvironment environment(Map<String, Object> properties) {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new MapPropertySource("test", new HashMap<>(properties)));
        return environment;
    }

    /** Processes a context built with {@code built} ahead of time and hands its compiled initializer to {@code run}. */
    @SuppressWarnings("unchecked")
    private static void processed(Map<String, Object> built,
                                  Consumer<ApplicationContextInitializer<GenericApplicationContext>> run) {
        GenericApplicationContext context = new GenericApplicationContext();
        context.setEnvironment(environment(built));
        TestGenerationContext generation = new TestGenerationContext(ClassName.get("com.example", "Application"));
        ClassName initializer = new ApplicationContextAotGenerator().processAheadOfTime(context, generation);
        generation.writeGeneratedContent();
        TestCompiler.forSystem().with(generation).compile(compiled ->
                run.accept(compiled.getInstance(ApplicationContextInitializer.class, initializer.reflectionName())));
    }

    /** A context started from the generated code with {@code runs} as its properties, then checked. */
    private static GenericApplicationContext started(ApplicationContextInitializer<GenericApplicationContext> generated,
                                                     Map<String, Object> runs) {
        GenericApplicationContext context = new GenericApplicationContext();
        context.setEnvironment(environment(runs));
        generated.initialize(context); // what SpringApplication runs first in an AOT-processed application
        new FencingAotCheck(() -> true).initialize(context);
        return context;
    }

    @Test
    void theGeneratedCodeRegistersTheBuildsDecisionsWithoutTheirValues() {
        AtomicReference<Map<String, String>> recorded = new AtomicReference<>();
        processed(Map.of("fencing.store.type", "in-memory", "fencing.signing.current-key-id", "k1",
                "fencing.signing.keys.k1.secret", SECRET, "fencing.web.filter.url-patterns", "/internal/*"),
                generated -> {
                    GenericApplicationContext context = new GenericApplicationContext();
                    generated.initialize(context);
                    recorded.set(((FencingAotDecisions) context.getBeanFactory()
                            .getSingleton(FencingAotDecisions.BEAN)).decisions());
                });
        assertThat(recorded.get()).containsEntry("fencing.store.type", "in-memory")
                .containsEntry("fencing.issuer.type", "none")
                .containsEntry(FencingAotDecisions.SIGNING, "set")
                .containsEntry(FencingAotDecisions.SIGNER, "set")
                .containsEntry("fencing.web.filter.url-patterns", "set")
                .containsEntry("fencing.enabled", "true");
        assertThat(FencingAotDecisions.text(recorded.get())).doesNotContain(SECRET).doesNotContain("/internal/*")
                .doesNotContain("k1");
    }

    @Test
    void runningWithPropertiesThatDecideOtherwiseFailsNamingEach() {
        processed(Map.of("fencing.store.type", "in-memory"), generated -> {
            assertThatThrownBy(() -> started(generated, Map.of("fencing.signing.current-key-id", "k1",
                    "fencing.signing.keys.k1.secret", SECRET)))
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("fencing.store.type: built with in-memory, runs with jdbc")
                    .hasMessageContaining(FencingAotDecisions.SIGNING + ": built with not set, runs with set")
                    .hasMessageContaining("spring-boot:process-aot")
                    .hasMessageNotContaining(SECRET);
            // the same decisions, other values that decide nothing: it starts
            started(generated, Map.of("fencing.store.type", "IN_MEMORY", "fencing.store.jdbc.table", "other_table"));
        });
    }

    /**
     * A switch is read as the starter's conditions read it: {@code on} is neither true nor false, so a build with
     * {@code on} and a run with {@code true} decided differently (no compaction was built in); the run's value names
     * where it was set.
     */
    @Test
    void switchesAreReadAsTheConditionsReadThemAndTheRunsValueNamesItsSource() {
        processed(Map.of("fencing.compaction.enabled", "on"), generated -> {
            assertThatThrownBy(() -> started(generated, Map.of("fencing.compaction.enabled", "true")))
                    .hasMessageContaining("fencing.compaction.enabled: built with 'on' (neither true nor false), "
                            + "runs with true (set in test)");
            started(generated, Map.of("fencing.compaction.enabled", "on"));
        });
        processed(Map.of(), generated -> assertThatThrownBy(() -> started(generated,
                Map.of("fencing.store.type", "in-memry")))
                .hasMessageContaining("fencing.store.type: built with jdbc, runs with 'in-memry' (not a valid value)"));
    }

    /**
     * Where the run's value was set is found in the forms Boot binds: an environment variable without the dash, an
     * indexed entry, a signing key (the signing decisions read several properties).
     */
    @Test
    void theRunsValueIsTracedInEveryFormBootBinds() {
        processed(Map.of(), generated -> {
            GenericApplicationContext context = new GenericApplicationContext();
            StandardEnvironment environment = environment(Map.of());
            environment.getPropertySources().addFirst(new org.springframework.core.env.SystemEnvironmentPropertySource(
                    "systemEnvironment", Map.of("FENCING_WEB_FILTER_URLPATTERNS", "/x/*")));
            environment.getPropertySources().addFirst(new MapPropertySource("commandLineArgs",
                    Map.of("fencing.web.client.propagate-to[0]", "ledger", "fencing.signing.keys.k1.secret", SECRET)));
            org.springframework.boot.context.properties.source.ConfigurationPropertySources.attach(environment);
            context.setEnvironment(environment);
            generated.initialize(context);
            assertThatThrownBy(() -> new FencingAotCheck(() -> true).initialize(context))
                    .hasMessageContaining("fencing.web.filter.url-patterns: built with not set, runs with set "
                            + "(set in systemEnvironment)")
                    .hasMessageContaining("fencing.web.client.propagate-to: built with not set, runs with set "
                            + "(set in commandLineArgs)")
                    .hasMessageContaining(FencingAotDecisions.SIGNING + ": built with not set, runs with set "
                            + "(set in commandLineArgs)");
        });
    }

    /**
     * The not-enabled check (an initializer of {@code spring.factories}, which Boot applies in the AOT processing and
     * again when the processed application runs) registers its bean by class: the processing writes it into the
     * generated code, and the run registers it once and starts.
     */
    @Test
    void theNotEnabledCheckIsProcessedAheadOfTimeAndRunsOnce() {
        GenericApplicationContext context = new GenericApplicationContext();
        context.setEnvironment(environment(Map.of()));
        new FencingNotEnabledCheck().initialize(context);
        TestGenerationContext generation = new TestGenerationContext(ClassName.get("com.example", "Application"));
        ClassName initializer = new ApplicationContextAotGenerator().processAheadOfTime(context, generation);
        generation.writeGeneratedContent();
        TestCompiler.forSystem().with(generation).compile(compiled -> {
            @SuppressWarnings("unchecked")
            ApplicationContextInitializer<GenericApplicationContext> generated = compiled.getInstance(
                    ApplicationContextInitializer.class, initializer.reflectionName());
            try (GenericApplicationContext run = new GenericApplicationContext()) {
                run.setEnvironment(environment(Map.of()));
                generated.initialize(run);
                new FencingNotEnabledCheck().initialize(run);
                run.refresh();
                assertThat(run.getBeanNamesForType(FencingNotEnabledCheck.StartupCheck.class)).hasSize(1);
            }
        });
    }

    /** A build processed with another version recorded nothing: the Action is to process it again. */
    @Test
    void nothingRecordedAsksForTheProcessingAgain() {
        GenericApplicationContext unprocessed = new GenericApplicationContext();
        unprocessed.setEnvironment(environment(Map.of()));
        Throwable failure = org.assertj.core.api.Assertions.catchThrowable(() ->
                new FencingAotCheck(() -> true).initialize(unprocessed));
        assertThat(FencingFailureAnalyzer.action(failure.getMessage())).contains("Run the AOT processing again");
    }

    /** The failure analysis's Action is the AOT fix, also when a signing decision differs (not the key advice). */
    @Test
    void theFailureAnalysisNamesTheBuildAsTheFix() {
        processed(Map.of(), generated -> {
            Throwable failure = org.assertj.core.api.Assertions.catchThrowable(() -> started(generated,
                    Map.of("fencing.signing.keys.k1.secret", SECRET)));
            String action = FencingFailureAnalyzer.action(failure.getMessage());
            assertThat(action).contains("spring-boot.aot.jvmArguments").contains("<profiles>")
                    .doesNotContain("openssl");
        });
    }

    @Test
    void theCheckRunsInAnAotProcessedApplicationOnlyAndNeedsTheBuildsDecisions() {
        GenericApplicationContext unprocessed = new GenericApplicationContext();
        unprocessed.setEnvironment(environment(Map.of("fencing.issuer.offset.base", "1000000")));
        new FencingAotCheck(() -> false).initialize(unprocessed); // not AOT-processed: not checked
        assertThatThrownBy(() -> new FencingAotCheck(() -> true).initialize(unprocessed))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("its build recorded no fencing decisions");
        processed(Map.of(), generated -> assertThatThrownBy(() -> started(generated,
                Map.of("fencing.issuer.offset.base", "1000000")))
                .hasMessageContaining("fencing.issuer.offset.base: built with not set, runs with set"));
    }
}
