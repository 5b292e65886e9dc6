package dev.fencing.it.weaving;

import dev.fencing.FencingConfigurationException;
import dev.fencing.aspectj.FencingAspect;
import dev.fencing.spring.support.FencingSupport;
import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.guard.FenceGuard;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.reactive.InMemoryReactiveFenceStore;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.aspectj.lang.Aspects;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What weaving must do, whichever way the fixtures were woven (compile time or load time). Extended by one test
 * class in each weaving module.
 */
public abstract class WeavingContract {

    private final FencingAspect aspect = Aspects.aspectOf(FencingAspect.class);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private FencingSupport support;

    @AfterEach
    void detach() {
        if (support != null) {
            aspect.detach(support);
        }
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    private void configureWithoutSpring(TokenIssuer issuer) {
        support = new FencingSupport(new FenceGuard(store, issuer, Duration.ofSeconds(10)), new FencingMetrics(registry));
        aspect.configure(support);
    }

    private double checks(MeterRegistry meters, String resource, String outcome) {
        var counter = meters.find("fencing.checks").tag("resource", resource).tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void theFixturesReallyAreWoven() {
        assertThat(WovenLedger.class.getDeclaredMethods())
                .anySatisfy(m -> assertThat(m.getName()).startsWith("append_aroundBody"));
    }

    @Test
    void anUnconfiguredAspectRefusesEveryFencedCall() {
        WovenLedger ledger = new WovenLedger();
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-ledger", 1, "h"), () -> ledger.append("x")))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("WovenLedger.append(String)").hasMessageContaining("not configured");
        assertThat(ledger.entries).isEmpty();
        assertThat(ledger.size()).isZero(); // unfenced methods are untouched
    }

    @Test
    void methodLevelFenceWithoutSpring() {
        configureWithoutSpring(null);
        WovenLedger ledger = new WovenLedger();
        assertThatThrownBy(() -> ledger.append("no token")).isInstanceOf(MissingTokenException.class);
        FencingContext.run(new FencingToken("woven-ledger", 34, "b"), () -> ledger.append("X"));
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-ledger", 33, "a"), () -> ledger.append("Y")))
                .isInstanceOf(StaleTokenException.class).hasMessageContaining("WovenLedger.append(String)");
        assertThat(ledger.entries).containsExactly("X");
        assertThat(checks(registry, "woven-ledger", "accepted")).isEqualTo(1);
        assertThat(checks(registry, "woven-ledger", "stale")).isEqualTo(1);
        assertThat(checks(registry, "woven-ledger", "missing")).isEqualTo(1);
    }

    @Test
    void privateAndFinalMethodsAreFencedByWeaving() {
        configureWithoutSpring(null);
        WovenLedger ledger = new WovenLedger();
        assertThatThrownBy(() -> ledger.appendViaPrivate("p")).isInstanceOf(MissingTokenException.class);
        assertThatThrownBy(() -> ledger.appendFinal("f")).isInstanceOf(MissingTokenException.class);
        FencingContext.run(new FencingToken("woven-ledger", 1, "h"), () -> {
            ledger.appendViaPrivate("p");
            ledger.appendFinal("f");
        });
        assertThat(ledger.entries).containsExactly("private p", "final f");
    }

    @Test
    void spelKeyUnderWeaving() {
        configureWithoutSpring(null);
        WovenLedger ledger = new WovenLedger();
        FencingContext.run(new FencingToken("woven-accounts:42", 5, "h"), () -> ledger.credit(42, "c"));
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-accounts:42", 5, "h"),
                () -> ledger.credit(43, "d"))).isInstanceOf(MissingTokenException.class)
                .hasMessageContaining("woven-accounts:43");
        assertThat(store.maxSeen("woven-accounts:42")).hasValue(5);
    }

    @Test
    void typeLevelAnnotationOnAWovenClass() {
        configureWithoutSpring(null);
        WovenNotes notes = new WovenNotes();
        assertThatThrownBy(() -> notes.note("x")).isInstanceOf(MissingTokenException.class)
                .hasMessageContaining("WovenNotes.note(String)");
        FencingContext.run(new FencingToken("woven-notes", 1, "h"), () -> notes.note("y"));
        assertThat(notes.notes).containsExactly("y");
        assertThat(notes.toString()).isEqualTo("WovenNotes[y]"); // Object's methods are not fenced
    }

    @Test
    void annotationsOnInterfacesAreInvisibleToWeaving() {
        // the documented limitation: the woven implementations are not fenced ...
        configureWithoutSpring(null);
        InterfaceAnnotatedRepositoryImpl repository = new InterfaceAnnotatedRepositoryImpl();
        repository.save("unchecked");
        assertThat(repository.saved).containsExactly("unchecked");
        WovenJournal journal = new WovenJournal();
        journal.record("unchecked");
        assertThat(journal.lines).containsExactly("unchecked");
        // ... which is why ASPECTJ mode refuses to start with such beans
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(InvisibleConfig.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("InterfaceAnnotatedRepositoryImpl.save(String)")
                .hasMessageContaining("WovenJournal.record(String)")
                .hasMessageContaining("AspectJ weaving cannot see");
    }

    @Configuration
    @EnableFencing(mode = AdviceMode.ASPECTJ, allowInMemoryStore = true)
    static class InvisibleConfig {
        @Bean
        InterfaceAnnotatedRepositoryImpl repository() {
            return new InterfaceAnnotatedRepositoryImpl();
        }

        @Bean
        WovenJournal journal() {
            return new WovenJournal();
        }
    }

    @Configuration
    @EnableFencing(mode = AdviceMode.ASPECTJ)
    static class AspectJConfig {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer(Duration.ofMillis(200), 32);
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        WovenLedger ledger() {
            return new WovenLedger();
        }

        @Bean
        WovenBookkeeper bookkeeper(WovenLedger ledger) {
            return new WovenBookkeeper(ledger);
        }
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class ProxyConfig {
        @Bean
        WovenNotes notes() {
            return new WovenNotes();
        }
    }

    @Test
    void springAspectjModeCreatesNoProxyAndRunsTheFenceOncePerCall() {
        try (var ctx = new AnnotationConfigApplicationContext(AspectJConfig.class)) {
            WovenLedger ledger = ctx.getBean(WovenLedger.class);
            WovenBookkeeper bookkeeper = ctx.getBean(WovenBookkeeper.class);
            assertThat(AopUtils.isAopProxy(ledger)).isFalse();
            assertThat(AopUtils.isAopProxy(bookkeeper)).isFalse();
            bookkeeper.book("a");
            bookkeeper.book("b");
            MeterRegistry meters = ctx.getBean(MeterRegistry.class);
            assertThat(checks(meters, "woven-ledger", "accepted")).isEqualTo(2);
            assertThat(ledger.entries).containsExactly("a", "b");
        }
        assertThat(aspect.isConfigured()).isFalse(); // detached when the context closed
    }

    @Test
    void canonicalRaceUnderWeaving() throws Exception {
        try (var ctx = new AnnotationConfigApplicationContext(AspectJConfig.class)) {
            ctx.getBean(InMemoryFenceStore.class).raiseFloor("woven-ledger", 32);
            WovenLedger ledger = ctx.getBean(WovenLedger.class);
            WovenBookkeeper bookkeeper = ctx.getBean(WovenBookkeeper.class);
            CountDownLatch acquired = new CountDownLatch(1);
            CountDownLatch wake = new CountDownLatch(1);
            CompletableFuture<Throwable> client1 = CompletableFuture.supplyAsync(() -> {
                try {
                    bookkeeper.bookWith(() -> {
                        acquired.countDown();
                        try {
                            wake.await();
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                        ledger.append("Y");
                    });
                    return null;
                } catch (Throwable t) {
                    return t;
                }
            });
            assertThat(acquired.await(10, TimeUnit.SECONDS)).isTrue();
            bookkeeper.book("X");
            wake.countDown();
            assertThat(client1.get(10, TimeUnit.SECONDS)).isInstanceOfSatisfying(StaleTokenException.class, e -> {
                assertThat(e.presented().value()).isEqualTo(33);
                assertThat(e.maxSeen()).isEqualTo(34);
            });
            assertThat(ledger.entries).containsExactly("X");
            MeterRegistry meters = ctx.getBean(MeterRegistry.class);
            assertThat(checks(meters, "woven-ledger", "accepted")).isEqualTo(1);
            assertThat(checks(meters, "woven-ledger", "stale")).isEqualTo(1);
        }
    }

    @Configuration
    @EnableFencing(mode = AdviceMode.ASPECTJ, allowInMemoryStore = true)
    static class ReactiveConfig {
        @Bean
        InMemoryReactiveFenceStore reactiveFenceStore() {
            return new InMemoryReactiveFenceStore();
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        WovenReactiveLedger reactiveLedger() {
            return new WovenReactiveLedger();
        }
    }

    @Test
    void reactiveMethodsAreFencedOnEachSubscriptionUnderWeaving() {
        try (var ctx = new AnnotationConfigApplicationContext(ReactiveConfig.class)) {
            WovenReactiveLedger ledger = ctx.getBean(WovenReactiveLedger.class);
            Mono<String> write = ledger.append(1, "a");
            assertThat(ledger.bodies).isEmpty(); // the body runs when subscribed

            StepVerifier.create(write.contextWrite(ReactiveFencing.bind(new FencingToken("woven-reactive:1", 5, "h5"))))
                    .expectNext("a").verifyComplete();
            StepVerifier.create(write.contextWrite(ReactiveFencing.bind(new FencingToken("woven-reactive:1", 4, "h4"))))
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(StaleTokenException.class)
                            .hasMessageContaining("WovenReactiveLedger.append(long, String)"))
                    .verify();
            StepVerifier.create(write.contextWrite(ReactiveFencing.bind(new FencingToken("woven-reactive:1", 6, "h6"))))
                    .expectNext("a").verifyComplete();
            StepVerifier.create(ledger.append(2, "b")).expectError(MissingTokenException.class).verify();

            assertThat(ledger.bodies).containsExactly("a", "a");
            assertThat(ctx.getBean(InMemoryReactiveFenceStore.class).maxSeen("woven-reactive:1")).hasValue(6);
            MeterRegistry meters = ctx.getBean(MeterRegistry.class);
            assertThat(checks(meters, "woven-reactive", "accepted")).isEqualTo(2);
            assertThat(checks(meters, "woven-reactive", "stale")).isEqualTo(1);
            assertThat(checks(meters, "woven-reactive", "missing")).isEqualTo(1);
        }
    }

    @Test
    void proxyModeOverWovenClassesRefusesCallsInsteadOfFencingTwice() {
        try (var ctx = new AnnotationConfigApplicationContext(ProxyConfig.class)) {
            WovenNotes notes = ctx.getBean(WovenNotes.class);
            assertThat(AopUtils.isAopProxy(notes)).isTrue();
            assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-notes", 1, "h"),
                    () -> notes.note("x")))
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("must not run twice");
        }
    }
}
