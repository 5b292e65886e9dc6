package dev.fencing.spring;

import dev.fencing.testsupport.LogRecords;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.mode.FenceMode;
import dev.fencing.mode.FenceModes;
import dev.fencing.reactive.InMemoryReactiveFenceStore;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Level;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code @EnableFencing(observe = ...)} and a {@link FencingConfigurer}'s modes reach the proxy's guard through the
 * {@link FenceModes} bean, whose switches the next call sees, on blocking and reactive points alike.
 */
class ObserveModeWiringTest {

    private AnnotationConfigApplicationContext context;

    @AfterEach
    void close() {
        if (context != null) {
            context.close();
        }
    }

    static class Notes {
        private final List<String> written = new CopyOnWriteArrayList<>();

        /** What was written (read through the proxy, which has no state of its own). */
        public List<String> written() {
            return written;
        }

        @Fenced(resource = "notes")
        public void write(String note) {
            written.add(note);
        }

        @Fenced(resource = "drafts")
        public void draft(String note) {
            written.add("draft " + note);
        }
    }

    static class ReactiveNotes {
        @Fenced(resource = "notes")
        public Mono<String> write(String note) {
            return Mono.just(note);
        }
    }

    /** The fenced bean and the store every configuration below has; each adds its own @EnableFencing. */
    static class NotesAndStore {
        @Bean
        Notes notes() {
            return new Notes();
        }

        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }
    }

    @Configuration
    @EnableFencing(observe = "notes")
    static class Observing extends NotesAndStore {
        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    /** Observe mode with a store that judges at commit, after the body: startup refuses the combination. */
    @Configuration
    @EnableFencing(observe = "notes")
    static class ObservingAtCommit {
        @Bean
        Notes notes() {
            return new Notes();
        }

        @Bean
        FenceStore fenceStore() {
            InMemoryFenceStore memory = new InMemoryFenceStore();
            return new FenceStore() {
                @Override
                public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
                    return memory.fence(resource, token, write);
                }

                @Override
                public boolean judgesAtCommit() {
                    return true;
                }
            };
        }
    }

    @Configuration
    @EnableFencing(defaultFenceMode = FenceMode.OBSERVE)
    static class ConfiguredOutside extends NotesAndStore {
        @Bean
        FencingConfigurer configurer() {
            return new FencingConfigurer() {
                @Override
                public Map<String, FenceMode> fenceModes() {
                    return Map.of("drafts", FenceMode.ENFORCE);
                }
            };
        }
    }

    @Configuration
    @EnableFencing(observe = "notes", allowInMemoryStore = true)
    static class ReactiveObserving {
        @Bean
        ReactiveNotes notes() {
            return new ReactiveNotes();
        }

        @Bean
        InMemoryReactiveFenceStore reactiveFenceStore() {
            return new InMemoryReactiveFenceStore();
        }
    }

    /**
     * The WARN that checks are observed and the calls run comes once startup accepted the modes: not before a refusal
     * of observe mode (with a store that judges at commit), which it would contradict.
     */
    @Test
    void theObserveModeWarningComesOnlyFromAStartupThatAcceptedIt() {
        try (LogRecords log = LogRecords.of("dev.fencing.spring.support")) {
            assertThatThrownBy(() -> new AnnotationConfigApplicationContext(ObservingAtCommit.class).close())
                    .hasStackTraceContaining("observe");
            assertThat(log.records()).noneMatch(r -> r.getMessage().contains("starts in observe mode"));
            context = new AnnotationConfigApplicationContext(Observing.class);
            assertThat(log.records()).filteredOn(r -> r.getMessage().contains("starts in observe mode"))
                    .singleElement().satisfies(r -> {
                        assertThat(r.getLevel()).isEqualTo(Level.WARNING);
                        assertThat(r.getMessage()).contains("notes").contains("the calls run");
                    });
        }
    }

    @Test
    void anObservedResourceRunsWithoutATokenAndASwitchReachesTheNextCall() {
        context = new AnnotationConfigApplicationContext(Observing.class);
        Notes notes = context.getBean(Notes.class);
        MeterRegistry registry = context.getBean(MeterRegistry.class);

        notes.write("no token");
        assertThatThrownBy(() -> notes.draft("no token")).isInstanceOf(MissingTokenException.class);
        assertThat(notes.written()).containsExactly("no token");
        assertThat(registry.find("fencing.checks").tag("resource", "notes").tag("outcome", "missing")
                .tag("enforced", "false").counter().count()).isEqualTo(1);

        FenceModes modes = context.getBean(FenceModes.class);
        assertThat(modes.observed().withoutToken()).singleElement()
                .satisfies(call -> assertThat(call.operation()).contains("Notes.write(String)"));
        modes.set("notes", FenceMode.ENFORCE, "test");
        assertThatThrownBy(() -> notes.write("refused")).isInstanceOf(MissingTokenException.class);
        FencingContext.run(new FencingToken("notes", 1, "h"), () -> notes.write("with a token"));
        assertThat(notes.written()).containsExactly("no token", "with a token");
    }

    @Test
    void aConfigurersModesJoinTheAnnotations() {
        context = new AnnotationConfigApplicationContext(ConfiguredOutside.class);
        Notes notes = context.getBean(Notes.class);
        notes.write("observed by default");
        assertThatThrownBy(() -> notes.draft("enforced by the configurer")).isInstanceOf(MissingTokenException.class);
        assertThat(context.getBean(FenceModes.class).resources())
                .containsExactly(Map.entry("drafts", FenceMode.ENFORCE));
    }

    @Configuration
    @EnableFencing(observe = "nots")
    static class Misspelt extends NotesAndStore {
    }

    @Configuration
    @EnableFencing(observe = "notes:7")
    static class PerEntity extends NotesAndStore {
    }

    @Test
    void aModeForOneEntitySaysModesApplyToTheWholeResource() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(PerEntity.class))
                .hasMessageContaining("a fence mode is set for resource 'notes:7': it names one entity of resource "
                        + "'notes'")
                .hasMessageContaining("(fencing.modes.notes)");
        context = new AnnotationConfigApplicationContext(Observing.class);
        FenceModes modes = context.getBean(FenceModes.class);
        assertThatThrownBy(() -> modes.set("notes:7", FenceMode.ENFORCE, "ops"))
                .hasMessageContaining("never to one entity");
        assertThatThrownBy(() -> modes.set("n\u200Bots\n", FenceMode.ENFORCE, "ops"))
                .hasMessageContaining("'n\\u200Bots\\u000A'").hasMessageNotContaining("\n");
        assertThat(modes.mode("notes")).isEqualTo(FenceMode.OBSERVE);
    }

    @Test
    void aModeForAResourceNoMethodDeclaresFailsStartupAndIsRefusedAtRuntime() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(Misspelt.class))
                .hasMessageContaining("a fence mode is set for resource 'nots', which no @Fenced method declares")
                .hasMessageContaining("declared: [drafts, notes]");

        context = new AnnotationConfigApplicationContext(Observing.class);
        FenceModes modes = context.getBean(FenceModes.class);
        assertThatThrownBy(() -> modes.set("nots", FenceMode.ENFORCE, "ops"))
                .hasMessageContaining("no @Fenced method declares it");
        assertThat(modes.mode("notes")).isEqualTo(FenceMode.OBSERVE);
    }

    @Test
    void aReactiveCheckingPointObservesToo() {
        context = new AnnotationConfigApplicationContext(ReactiveObserving.class);
        ReactiveNotes notes = context.getBean(ReactiveNotes.class);
        StepVerifier.create(notes.write("no token")).expectNext("no token").verifyComplete();
        context.getBean(FenceModes.class).set("notes", FenceMode.ENFORCE, "test");
        StepVerifier.create(notes.write("refused")).expectError(MissingTokenException.class).verify();
    }
}
