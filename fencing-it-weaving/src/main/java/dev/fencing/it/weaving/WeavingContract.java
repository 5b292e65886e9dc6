package dev.fencing.it.weaving;

import dev.fencing.it.weavingfaults.InterfaceAnnotatedRepositoryImpl;
import dev.fencing.it.weavingmeta.LedgerWrite;
import dev.fencing.it.weavingmeta.MetaConfig;
import dev.fencing.it.weavingmeta.MetaLedger;
import dev.fencing.it.weavingmetaonly.LedgerService;
import dev.fencing.it.weavingmetaonly.MetaOnlyConfig;
import dev.fencing.it.weavingmetaonly.MetaOnlyService;
import dev.fencing.it.weavingfaults.InvisibleConfig;
import dev.fencing.it.weavingfaults.WovenJournal;
import dev.fencing.it.weavingfaults.WovenStatic;
import dev.fencing.it.weavingreactive.ReactiveConfig;
import dev.fencing.it.weavingreactive.WovenReactiveLedger;
import dev.fencing.FencingConfigurationException;
import dev.fencing.aspectj.FencingAspect;
import dev.fencing.spring.support.FencingSupport;
import dev.fencing.spring.support.WovenFence;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.store.BracketFenceStore;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import org.junit.jupiter.api.Timeout;
import java.io.IOException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import dev.fencing.context.MissingTokenException;
import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.InvalidKeyException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.mode.FenceMode;
import dev.fencing.mode.FenceModes;
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

import dev.fencing.it.weaving.WovenSavers.Loader;
import dev.fencing.it.weavinglambda.LambdaLedgers;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
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
        support = new FencingSupport(new FenceGuard(store, issuer, Duration.ofSeconds(10)),
                new FencingMetrics(registry));
        aspect.configure(support);
    }

    private double checks(MeterRegistry meters, String resource, String outcome) {
        var counter = meters.find("fencing.checks").tag("resource", resource).tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    /**
     * The fixtures are woven, and FencingAspect marks each method it fences with {@link WovenFence}, which the ASPECTJ
     * startup check reads: not a method it does not fence, even one whose overload it fences.
     */
    @Test
    void theFixturesReallyAreWoven() throws NoSuchMethodException {
        assertThat(WovenLedger.class.getDeclaredMethods())
                .anySatisfy(m -> assertThat(m.getName()).startsWith("append_aroundBody"));
        assertThat(WovenLedger.class.getMethod("append", String.class).isAnnotationPresent(WovenFence.class)).isTrue();
        assertThat(WovenLedger.class.getMethod("size").isAnnotationPresent(WovenFence.class)).isFalse();
        assertThat(WovenNotes.class.getMethod("note", String.class).isAnnotationPresent(WovenFence.class))
                .as("a public method of a class carrying @Fenced").isTrue();
        assertThat(MetaLedger.class.getMethod("append", String.class).isAnnotationPresent(WovenFence.class)).isTrue();
        assertThat(MetaLedger.class.getMethod("append", String.class, int.class).isAnnotationPresent(WovenFence.class))
                .as("fenced through a composed annotation only").isFalse();
    }

    /**
     * A method fenced through a composed annotation ({@code @LedgerWrite}, which carries {@code @Fenced}) beside an
     * overload with {@code @Fenced} itself: weaving fences the overload alone, though both have a body moved into
     * {@code append_aroundBodyN}. Startup fails naming the composed one and the annotation to write on it, so it never
     * runs without a token (it did: the check took the overload's woven body for its own).
     */
    @Test
    void aComposedFenceBesideAWovenOverloadFailsStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(MetaConfig.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("MetaLedger.append(String, int) gets @Fenced from @LedgerWrite ("
                        + LedgerWrite.class.getName() + ") on MetaLedger.append(String, int), which carries it as a "
                        + "meta-annotation: AspectJ weaving matches @Fenced itself only, so it would run unfenced; put "
                        + "@Fenced(resource = \"meta-ledger\") itself on MetaLedger.append(String, int), or use PROXY "
                        + "mode, where composed annotations are found")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContainPattern("MetaLedger\\.append\\(String\\)"));
    }

    /**
     * A composed annotation alone, on a method of a bean and on a class that is no bean: startup names each method and
     * says what weaving cannot see, not that the class "was not woven" (it may well be).
     */
    @Test
    void composedFencesOnMethodsAndTypesFailStartupSayingWhatWeavingCannotSee() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(MetaOnlyConfig.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("MetaOnlyLedger.append(String) gets @Fenced from @LedgerWrite")
                .hasMessageContaining("MetaOnlyService.record(String) gets @Fenced from @LedgerService ("
                        + LedgerService.class.getName() + ") on type " + MetaOnlyService.class.getName())
                .hasMessageContaining("put @Fenced(resource = \"meta-service\") itself on "
                        + "MetaOnlyService.record(String) or on " + MetaOnlyService.class.getName())
                .hasMessageNotContaining("was not woven");
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
        assertThatThrownBy(() ->
                FencingContext.run(new FencingToken("woven-ledger", 33, "a"), () -> ledger.append("Y")))
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

    /**
     * Configured by hand, without a Spring context, with the packages of the woven classes: they are checked first, as
     * ASPECTJ mode checks them at startup, and the aspect stays unconfigured when one would run unfenced (a plain-Java
     * trial ran an override without the annotation, an interface-annotated method and a resource fenced both ways
     * unfenced, with no word).
     */
    @Test
    void configuredByHandWithItsPackagesTheWovenClassesAreCheckedFirst() {
        FencingSupport hand = new FencingSupport(new FenceGuard(store, new InMemoryTokenIssuer(),
                Duration.ofSeconds(10)), new FencingMetrics(registry));
        assertThatThrownBy(() -> aspect.configure(hand, "dev.fencing.it.weavingfaults"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("InterfaceAnnotatedRepositoryImpl.save(String)")
                .hasMessageContaining("WovenJournal.record(String)")
                .hasMessageContaining("WovenOverride.put(String) gets @Fenced from")
                .hasMessageContaining("resource 'woven-mixed' is checked without a key by WovenMixedKeys.all()")
                .hasMessageContaining("WovenStatic.staticWrite(long) is static");
        assertThat(aspect.isConfigured()).as("left unconfigured: every fenced call refused").isFalse();
        aspect.configure(hand); // without packages: not checked (ASPECTJ mode's context checks its own)
        assertThat(aspect.isConfigured()).isTrue();
        aspect.detach(hand);
        assertThatThrownBy(() -> aspect.configure(hand, new String[0])).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name the packages");
        assertThatThrownBy(() -> aspect.configure(hand, "dev.fencing.it.weaving", " "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("was [\"dev.fencing.it.weaving\", \" \"]");
        // a typo, a wildcard or a class name holds no class: refused, not a check of nothing
        assertThatThrownBy(() -> aspect.configure(hand, "dev.fencing.it.weavnig", "dev.fencing.it.weaving.*"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("package 'dev.fencing.it.weavnig' holds no class")
                .hasMessageContaining("package 'dev.fencing.it.weaving.*' holds no class");
        // an override whose fenced supertype lies in a package not named
        assertThatThrownBy(() -> aspect.configure(hand, "dev.fencing.it.weavingoutside"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("OutsideOverride.put(String) gets @Fenced from WovenBase.put(String)");

        aspect.configure(hand, "dev.fencing.it.weaving");
        support = hand;
        assertThat(aspect.isConfigured()).isTrue();
        // a later configuration that fails leaves none: every fenced call refused, not the earlier one kept
        assertThatThrownBy(() -> aspect.configure(hand, "dev.fencing.it.weavingfaults"))
                .isInstanceOf(FencingConfigurationException.class);
        assertThat(aspect.isConfigured()).isFalse();
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

    /** Observes a resource that only a woven class which is not a bean declares (WovenCounter). */
    @Configuration
    @EnableFencing(mode = AdviceMode.ASPECTJ, allowInMemoryStore = true, observe = "woven-counter")
    static class ObservedNonBeanConfig {
        @Bean
        WovenLedger ledger() {
            return new WovenLedger();
        }

        /** WovenBookkeeper, under this package, acquires: the startup check requires an issuer for it. */
        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer(Duration.ofMillis(200), 32);
        }
    }

    @Configuration
    @EnableFencing(mode = AdviceMode.ASPECTJ, allowInMemoryStore = true, observe = "woven-ledgr")
    static class MisspeltModeConfig {
        @Bean
        WovenLedger ledger() {
            return new WovenLedger();
        }

        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer(Duration.ofMillis(200), 32);
        }
    }

    @Test
    void aModeMayNameOnlyADeclaredResourceAlsoInAspectjModeWhereWovenClassesNeedNotBeBeans() {
        try (var ctx = new AnnotationConfigApplicationContext(ObservedNonBeanConfig.class)) {
            FenceModes modes = ctx.getBean(FencingSupport.class).modes();
            assertThat(modes.mode("woven-counter")).isEqualTo(FenceMode.OBSERVE);
            assertThat(new WovenCounter().addLong(1)).as("observed: runs without a token").isEqualTo(1);
            // a misspelt name or an entity's key would leave the resource meant in its mode: refused, unchanged
            assertThatThrownBy(() -> modes.set("woven-ledgr", FenceMode.OBSERVE, "ops"))
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("no @Fenced method declares it");
            assertThatThrownBy(() -> modes.set("woven-ledger:1", FenceMode.ENFORCE, "ops"))
                    .isInstanceOf(FencingConfigurationException.class);
            modes.set("woven-ledger", FenceMode.OBSERVE, "ops");
            assertThat(modes.mode("woven-ledger")).isEqualTo(FenceMode.OBSERVE);
        }
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(MisspeltModeConfig.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("a fence mode is set for resource 'woven-ledgr', which no @Fenced method "
                        + "declares by a bean or a class under [dev.fencing.it.weaving]");
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
            Throwable[] knownLost = new Throwable[1];
            CompletableFuture<Throwable> client1 = CompletableFuture.supplyAsync(() -> {
                try {
                    bookkeeper.bookWith(() -> {
                        acquired.countDown();
                        try {
                            wake.await();
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                        try {
                            ledger.append("Y"); // its own process knows the lease ran out
                        } catch (StaleTokenException e) {
                            knownLost[0] = e;
                        }
                        // as a process that does not know its lease is lost presents it: the store decides
                        try (var remote = dev.fencing.context.FencingContext.bindRemote(java.util.List.of(
                                dev.fencing.context.FencingContext.current("woven-ledger")))) {
                            ledger.append("Y");
                        }
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
                assertThat(e.lockLost()).isFalse();
                assertThat(e.presented().value()).isEqualTo(33);
                assertThat(e.maxSeen()).isEqualTo(34);
            });
            assertThat(knownLost[0]).isInstanceOfSatisfying(StaleTokenException.class, e -> {
                assertThat(e.lockLost()).isTrue();
                assertThat(e.presented().value()).isEqualTo(33);
            });
            assertThat(ledger.entries).containsExactly("X");
            MeterRegistry meters = ctx.getBean(MeterRegistry.class);
            assertThat(checks(meters, "woven-ledger", "accepted")).isEqualTo(1);
            assertThat(checks(meters, "woven-ledger", "stale")).isEqualTo(2);
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
    void unkeyedFencesOfEveryReturnTypeReturnWhatTheBodyReturns() {
        configureWithoutSpring(null);
        WovenCounter counter = new WovenCounter();
        assertThatThrownBy(() -> counter.addLong(1)).isInstanceOf(MissingTokenException.class)
                .hasMessageContaining("WovenCounter.addLong(long)");
        FencingContext.run(new FencingToken("woven-counter", 3, "h"), () -> {
            assertThat(counter.addInt(2)).isEqualTo(2);
            assertThat(counter.addLong(40_000_000_000L)).isEqualTo(40_000_000_002L);
            assertThat(counter.half(3f)).isEqualTo(1.5f);
            assertThat(counter.twice(1.25)).isEqualTo(2.5);
            assertThat(counter.initial("xyz")).isEqualTo('x');
            assertThat(counter.describe()).isEqualTo("total 40000000002");
            counter.reset();
        });
        assertThat(counter.total()).isZero();
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-counter", 2, "h"),
                () -> counter.addInt(1))).isInstanceOf(StaleTokenException.class)
                .hasMessageContaining("WovenCounter.addInt(int)");
        assertThat(counter.total()).isZero();
        assertThat(checks(registry, "woven-counter", "accepted")).isEqualTo(7);
        assertThat(checks(registry, "woven-counter", "missing")).isEqualTo(1);
        assertThat(checks(registry, "woven-counter", "stale")).isEqualTo(1);
    }

    @Test
    void keyedFencesOfEveryReturnTypeReturnWhatTheBodyReturns() {
        configureWithoutSpring(null);
        WovenCounter counter = new WovenCounter();
        assertThatThrownBy(() -> counter.addIntTo(1, 1)).isInstanceOf(MissingTokenException.class)
                .hasMessageContaining("WovenCounter.addIntTo(int, int)").hasMessageContaining("woven-slots:1");
        try (FencingScope ignored = FencingContext.bind(new FencingToken("woven-slots:1", 3, "h"),
                new FencingToken("woven-slots:one", 3, "h"))) {
            assertThat(counter.addIntTo(1, 2)).isEqualTo(2);
            assertThat(counter.addTo(1, 40_000_000_000L)).isEqualTo(40_000_000_002L);
            assertThat(counter.halfOf(1, 3f)).isEqualTo(1.5f);
            assertThat(counter.twiceOf(1, 1.25)).isEqualTo(2.5);
            assertThat(counter.describe("one")).isEqualTo("one total 40000000002");
            IOException failure = new IOException("disk full");
            assertThatThrownBy(() -> counter.failAt(1, failure)).isSameAs(failure);
            assertThatThrownBy(() -> counter.describe(null)).isInstanceOf(InvalidKeyException.class)
                    .hasMessageContaining("WovenCounter.describe(String)");
            assertThat(Arrays.stream(counter.stackAt(1)).map(StackTraceElement::getClassName))
                    .as("the fence runs in the woven method, not as the guard's callback")
                    .doesNotContain(FenceGuard.class.getName());
        }
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-slots:1", 2, "h"),
                () -> counter.addIntTo(1, 1))).isInstanceOf(StaleTokenException.class)
                .hasMessageContaining("WovenCounter.addIntTo(int, int)");
        assertThat(counter.total()).isEqualTo(40_000_000_003L);
        assertThat(store.maxSeen("woven-slots:1")).hasValue(3);
        assertThat(checks(registry, "woven-slots", "accepted")).isEqualTo(7);
        assertThat(checks(registry, "woven-slots", "missing")).isEqualTo(1);
        assertThat(checks(registry, "woven-slots", "invalid")).isEqualTo(1);
        assertThat(checks(registry, "woven-slots", "stale")).isEqualTo(1);
    }

    @Test
    void keyedMethodsOfEveryParameterCountFenceTheEntityTheirKeyNames() {
        configureWithoutSpring(null);
        WovenArities arities = new WovenArities();
        try (FencingScope ignored = bindEveryArityKey()) {
            callEveryArity(arities);
            // a key read from the wrong argument would find a bound token ('7') and let these through
            assertThatThrownBy(() -> arities.one(8)).isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("woven-arity:8").hasMessageContaining("WovenArities.one(long)");
            assertThatThrownBy(() -> arities.secondOfTwo(7, 8)).isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("woven-arity:8");
            assertThatThrownBy(() -> arities.nameOfTwo("7", "bob")).isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("woven-arity:bob");
            assertThatThrownBy(() -> arities.pathOfTwo("7", new WovenArities.Order("o-2")))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-arity:o-2");
            assertThatThrownBy(() -> arities.spelOverTwo("l", "x")).isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("woven-arity:l-x");
            assertThatThrownBy(() -> arities.firstOfThree(8, "7", 7)).isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("woven-arity:8");
            assertThatThrownBy(() -> arities.secondOfThree("7", 8, 7)).isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("woven-arity:8");
            assertThatThrownBy(() -> arities.thirdOfThree("7", 7, 8)).isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("woven-arity:8");
            assertThatThrownBy(() -> arities.fourthOfFour("7", "7", "7", 8)).isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("woven-arity:8");
            assertThatThrownBy(() -> arities.firstOfFive(8, "7", "7", "7", "7"))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-arity:8");
            assertThatThrownBy(() -> arities.spelOverFive("l", 7, 7, 7, "x")).isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("woven-arity:l-x");
            assertThatThrownBy(() -> arities.sixthOfSix(7, 7, 7, 7, 7, 8)).isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("woven-arity:8")
                    .hasMessageContaining("WovenArities.sixthOfSix(int, int, int, int, int, long)");
            assertThatThrownBy(() -> arities.intOfFour(8, 7, 7, 7)).isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("woven-arity:8");
            assertThatThrownBy(() -> arities.seventhOfSeven("7", "7", "7", "7", "7", "7", 8))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-arity:8");
            assertThatThrownBy(() -> arities.firstOfEight(8, "7", "7", "7", "7", "7", 7, 7))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-arity:8")
                    .hasMessageContaining("WovenArities.firstOfEight(long, String, String, String, String, String, "
                            + "int, long)");
            assertThatThrownBy(() -> arities.sixthOfSeven("7", "7", "7", "7", 7, 8, 7))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-arity:8");
            assertThatThrownBy(() -> arities.spelOverSeven("l", 7, 7, 7, 7, 7, "x"))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-arity:l-x");
            assertThatThrownBy(() -> arities.twelfthOfTwelve(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 8))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-arity:8");
            assertThatThrownBy(() -> arities.thirteenthOfThirteen("7", "7", "7", "7", "7", "7", "7", "7", "7", "7",
                    "7", "7", 8)).isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-arity:8");
            assertThatThrownBy(() -> arities.longOfFour("7", "7", "7", "8")).isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("woven-arity:8");
            assertThatThrownBy(() -> arities.floatOfFive("8", "7", "7", "7", "7"))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-arity:8");
            assertThatThrownBy(() -> arities.doubleOfSix("7", "7", "7", "8", "7", "7"))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-arity:8");
            assertThatThrownBy(() -> arities.intOfNine("7", "7", "7", "7", "7", "7", "7", "8", "7"))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-arity:8");
            assertThatThrownBy(() -> arities.floatOfTwelve("8", "7", "7", "7", "7", "7", "7", "7", "7", "7", "7", "7"))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-arity:8");
            assertThatThrownBy(() -> arities.doubleOfTen("7", "7", "7", "7", "7", "7", "7", "7", "7", "8"))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-arity:8");
            // past six parameters the key is read from the bound arguments, first six or last six: the fence runs in
            // the woven method, not as the guard's callback
            assertThat(Arrays.stream(arities.stackOfFirstOfSeven(7, 1, 2, 3, 4, 5, 6))
                    .map(StackTraceElement::getClassName)).doesNotContain(FenceGuard.class.getName());
            assertThat(Arrays.stream(arities.stackOfSeventhOfSeven(1, 2, 3, 4, 5, 6, 7))
                    .map(StackTraceElement::getClassName)).doesNotContain(FenceGuard.class.getName());
            // a static method is refused, its token bound or not, never run unfenced
            assertThatThrownBy(() -> WovenStatic.staticWrite(7)).isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("WovenStatic.staticWrite(long)").hasMessageContaining("static method");
            assertThat(WovenStatic.STATIC_WRITES).isEmpty();
            // a null argument is bound as it is (args() matches it): the call is fenced, and a null key refused
            assertThatThrownBy(() -> arities.nameOfTwo(null, "bob")).isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("woven-arity:bob");
            assertThat(arities.nameOfTwo(null, "ann")).isEqualTo("null ann");
            assertThatThrownBy(() -> arities.nameOfTwo("hi", null)).isInstanceOf(InvalidKeyException.class)
                    .hasMessageContaining("WovenArities.nameOfTwo(String, String)").hasMessageContaining("null");
            assertThatThrownBy(() -> arities.pathOfTwo("hi", null)).isInstanceOf(InvalidKeyException.class)
                    .hasMessageContaining("'#order' is null");
        }
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-arity:7", 2, "zombie"),
                () -> arities.thirdOfThree("x", 1, 7))).isInstanceOf(StaleTokenException.class)
                .hasMessageContaining("WovenArities.thirdOfThree(String, float, long)");
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-arity:7", 2, "zombie"),
                () -> arities.doubleOfTen("", "", "", "", "", "", "", "", "", "7")))
                .isInstanceOf(StaleTokenException.class)
                .hasMessageContaining("WovenArities.doubleOfTen(String, String, String, String, String, String, "
                        + "String, String, String, String)");
        // a key over no argument names its entity alone: another entity's token does not cover it, an older one is
        // stale
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-arity:7", 4, "h"), arities::none))
                .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-arity:all")
                .hasMessageContaining("WovenArities.none()");
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-arity:all", 2, "zombie"), arities::none))
                .isInstanceOf(StaleTokenException.class).hasMessageContaining("WovenArities.none()");
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-arity:7", 2, "zombie"),
                () -> arities.sixthOfSix(1, 2, 3, 4, 5, 7))).isInstanceOf(StaleTokenException.class)
                .hasMessageContaining("WovenArities.sixthOfSix(int, int, int, int, int, long)");
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-arity:7", 2, "zombie"),
                () -> arities.firstOfEight(7, "a", "b", "c", "d", "e", 1, 2))).isInstanceOf(StaleTokenException.class)
                .hasMessageContaining("WovenArities.firstOfEight(");
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-arity:l-r", 2, "zombie"),
                () -> arities.spelOverSeven("l", 1, 2, 3, 4, 5, "r"))).isInstanceOf(StaleTokenException.class)
                .hasMessageContaining("WovenArities.spelOverSeven(");
        assertThat(arities.writes).hasSize(29);
        assertThat(store.maxSeen("woven-arity:7")).hasValue(3);
        assertThat(store.maxSeen("woven-arity:l-r")).hasValue(3);
        assertThat(store.maxSeen("woven-arity:all")).hasValue(3);
        assertThat(checks(registry, "woven-arity", "accepted")).isEqualTo(29);
        assertThat(checks(registry, "woven-arity", "missing")).isEqualTo(27);
        assertThat(checks(registry, "woven-arity", "invalid")).isEqualTo(2);
        assertThat(checks(registry, "woven-arity", "stale")).isEqualTo(6);
    }

    @Test
    void keyedMethodsOfSevenParametersAndMoreReadEachArgumentWhereItIs() {
        configureWithoutSpring(null);
        WovenWide wide = new WovenWide();
        WovenWideRows rows = new WovenWideRows();
        RuntimeException failure = new IllegalStateException("body failed");
        try (FencingScope ignored = FencingContext.bind(new FencingToken("woven-wide:7", 3, "h"),
                new FencingToken("woven-wide:k", 3, "h"), new FencingToken("woven-wide:b-k", 3, "h"),
                new FencingToken("woven-wide-rows:7", 3, "h"))) {
            // every argument reaches the body at its place, primitives above the box caches and nulls included
            assertThat(wide.seventhOfEight("a", 2, 3.5, true, 'e', (short) 6, 7, (byte) 8))
                    .isEqualTo("[a, 2, 3.5, true, e, 6, 7, 8]");
            assertThat(wide.eighthOfNine(1, null, 40_000_000_003L, 4.5f, List.of(5), 'f', 7.25, "k", false))
                    .isEqualTo("[1, null, 40000000003, 4.5, [5], f, 7.25, k, false]");
            assertThat(wide.ninthOfTen("a", "b", "c", "d", "e", "f", "g", "h", 7, "i"))
                    .isEqualTo("[a, b, c, d, e, f, g, h, 7, i]");
            assertThat(wide.seventhOfEleven((byte) 1, (short) 2, 3, 40_000_000_004L, 5.5f, 6.5, 7, 'g', true, null,
                    List.of(9))).isEqualTo("[1, 2, 3, 40000000004, 5.5, 6.5, 7, g, true, null, [9]]");
            assertThat(wide.overSecondAndEleventhOfTwelve("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"))
                    .isEqualTo("[a, b, c, d, e, f, g, h, i, j, k, l]");
            assertThatThrownBy(() -> wide.failingOfSeven(7, 1, 2, 3, 4, 5, failure)).isSameAs(failure);
            assertThat(wide.firstOfThirteen(7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)).isEqualTo(7_000_000_000_078L);
            wide.lastOfThirteen(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 7);
            assertThat(rows.first(7, "a", "b", "c", "d", "e", "f")).isEqualTo("7abcdef");
            assertThat(rows.last("a", "b", "c", "d", "e", "f", 7)).isEqualTo("abcdef7");
            assertThat(rows.lastOfThirteen("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", 7))
                    .isEqualTo("abcdefghijkl7");
            // each key is read where it is: every other argument names an entity whose token is bound, so a key
            // read from the wrong place would let the call through
            assertThatThrownBy(() -> wide.seventhOfEight("7", 7, 7, true, '7', (short) 7, 8, (byte) 7))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-wide:8")
                    .hasMessageContaining("WovenWide.seventhOfEight(String, long, double, boolean, char, short, long, "
                            + "byte)");
            assertThatThrownBy(() -> wide.eighthOfNine(7, "7", 7, 7, "7", '7', 7, "x", true))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-wide:x");
            assertThatThrownBy(() -> wide.ninthOfTen("7", "7", "7", "7", "7", "7", "7", "7", 8, "7"))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-wide:8");
            assertThatThrownBy(() -> wide.seventhOfEleven((byte) 7, (short) 7, 7, 7, 7, 7, 8, '7', true, "7", "7"))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-wide:8");
            assertThatThrownBy(() -> wide.overSecondAndEleventhOfTwelve("k", "b", "k", "k", "k", "k", "k", "k", "k",
                    "k", "x", "k")).isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-wide:b-x");
            assertThatThrownBy(() -> wide.firstOfThirteen(8, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-wide:8");
            assertThatThrownBy(() -> wide.lastOfThirteen(7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-wide:8");
            assertThatThrownBy(() -> rows.last("7", "7", "7", "7", "7", "7", 8))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-wide-rows:8")
                    .hasMessageContaining("WovenWideRows.last(");
            assertThatThrownBy(() -> rows.lastOfThirteen("7", "7", "7", "7", "7", "7", "7", "7", "7", "7", "7", "7", 8))
                    .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-wide-rows:8");
            // a null key is refused before the body runs
            assertThatThrownBy(() -> wide.eighthOfNine(1, "7", 7, 7, "7", '7', 7, null, true))
                    .isInstanceOf(InvalidKeyException.class).hasMessageContaining("WovenWide.eighthOfNine(");
        }
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-wide:7", 2, "zombie"),
                () -> wide.seventhOfEleven((byte) 1, (short) 2, 3, 4, 5, 6, 7, 'g', true, "i", "j")))
                .isInstanceOf(StaleTokenException.class).hasMessageContaining("WovenWide.seventhOfEleven(");
        assertThat(wide.writes).hasSize(8);
        assertThat(checks(registry, "woven-wide", "accepted")).isEqualTo(8);
        assertThat(checks(registry, "woven-wide", "missing")).isEqualTo(7);
        assertThat(checks(registry, "woven-wide", "invalid")).isEqualTo(1);
        assertThat(checks(registry, "woven-wide", "stale")).isEqualTo(1);
        assertThat(checks(registry, "woven-wide-rows", "accepted")).isEqualTo(3);
        assertThat(store.maxSeen("woven-wide:7")).hasValue(3);
        // observed: the call runs as the guard's callback without a token, its arguments and result unchanged
        support.modes().set("woven-wide", FenceMode.OBSERVE, "test");
        assertThat(wide.seventhOfEleven((byte) 1, (short) 2, 3, 40_000_000_004L, 5.5f, 6.5, 8, 'g', true, null,
                List.of(9))).isEqualTo("[1, 2, 3, 40000000004, 5.5, 6.5, 8, g, true, null, [9]]");
        assertThat(wide.firstOfThirteen(8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)).isEqualTo(8_000_000_000_078L);
        assertThat(wide.writes).hasSize(10);
    }

    @Test
    void keyedMethodsOfEveryParameterCountRunAsTheCallbackOfAStoreWithoutBrackets() {
        AtomicInteger fences = new AtomicInteger();
        FenceStore callbacksOnly = callbacksOnly(fences);
        support = new FencingSupport(new FenceGuard(callbacksOnly, null, Duration.ofSeconds(10)),
                new FencingMetrics(registry));
        aspect.configure(support);
        WovenArities arities = new WovenArities();
        try (FencingScope ignored = bindEveryArityKey()) {
            callEveryArity(arities);
            assertThatThrownBy(() -> arities.secondOfThree("7", 8, 7)).isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("woven-arity:8");
            assertThatThrownBy(() -> arities.nameOfTwo("hi", null)).isInstanceOf(InvalidKeyException.class);
        }
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-arity:7", 2, "zombie"),
                () -> arities.firstOfThree(7, "x", 1))).isInstanceOf(StaleTokenException.class);
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-arity:all", 2, "zombie"), arities::none))
                .isInstanceOf(StaleTokenException.class).hasMessageContaining("WovenArities.none()");
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-arity:7", 2, "zombie"),
                () -> arities.firstOfFive(7, "a", "b", "c", "d"))).isInstanceOf(StaleTokenException.class)
                .hasMessageContaining("WovenArities.firstOfFive(long, String, String, String, String)");
        assertThat(fences).hasValue(29);
        assertThat(arities.writes).hasSize(26);
        assertThat(checks(registry, "woven-arity", "accepted")).isEqualTo(26);
        assertThat(checks(registry, "woven-arity", "stale")).isEqualTo(3);
    }

    /** The in-memory store behind one that only runs callbacks (no bracket), counting them in {@code fences}. */
    private FenceStore callbacksOnly(AtomicInteger fences) {
        return new FenceStore() {
            @Override
            public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
                fences.incrementAndGet();
                return store.fence(resource, token, write);
            }
        };
    }

    private static FencingScope bindEveryArityKey() {
        return FencingContext.bind(new FencingToken("woven-arity:7", 3, "h"),
                new FencingToken("woven-arity:ann", 3, "h"),
                new FencingToken("woven-arity:o-1", 3, "h"), new FencingToken("woven-arity:l-r", 3, "h"),
                new FencingToken("woven-arity:all", 3, "h"));
    }

    /** One accepted call of each {@link WovenArities} method, checking what each returns. */
    private static void callEveryArity(WovenArities arities) {
        assertThat(arities.one(7)).isEqualTo("one 7");
        assertThat(arities.secondOfTwo(3, 7)).isEqualTo(4.5f);
        assertThat(arities.nameOfTwo("hi", "ann")).isEqualTo("hi ann");
        assertThat(arities.pathOfTwo("hi", new WovenArities.Order("o-1"))).isEqualTo("hi o-1");
        arities.spelOverTwo("l", "r");
        assertThat(arities.firstOfThree(7, "abc", 2.9)).isEqualTo(5);
        assertThat(arities.secondOfThree("abc", 7, 2.9f)).isEqualTo(12);
        assertThat(arities.thirdOfThree("abc", 0.5f, 7)).isEqualTo(10.5);
        assertThat(arities.fourthOfFour("a", "b", "c", 7)).isEqualTo("abc7");
        assertThat(arities.firstOfFive(7, "a", "b", "c", "d")).isEqualTo("abcd7");
        arities.spelOverFive("l", 1, 2, 3, "r");
        assertThat(arities.sixthOfSix(1, 2, 3, 4, 5, 7)).isEqualTo(22L);
        assertThat(arities.intOfFour(7, 1_000_000, 2_000_000, 3)).isEqualTo(3_000_003); // boxed and back
        assertThat(arities.seventhOfSeven("a", "b", "c", "d", "e", "f", 7)).isEqualTo("abcdef7");
        // past six parameters: the arguments after the sixth passed on as they are, a long result boxed and back
        assertThat(arities.firstOfEight(7, "a", "bb", "ccc", "", "e", 100, 40_000_000_000L))
                .isEqualTo(40_000_000_114L);
        assertThat(arities.sixthOfSeven("a", "bb", "", "", 0.25f, 7, 0.125)).isEqualTo(10.375);
        arities.spelOverSeven("l", 1, 2, 3, 4, 5, "r");
        assertThat(arities.twelfthOfTwelve(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 7)).isEqualTo(73L);
        assertThat(arities.thirteenthOfThirteen("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", 7))
                .isEqualTo("abcdefghijkl7");
        // primitive results past the box caches, returned by advices of their own type (four to twelve parameters)
        assertThat(arities.longOfFour("a", "bb", "ccc", "7")).isEqualTo(40_000_000_006L);
        assertThat(arities.floatOfFive("7", "a", "bb", "", "dddd")).isEqualTo(7.5f);
        assertThat(arities.doubleOfSix("a", "bb", "", "7", "dddd", "e")).isEqualTo(8.25);
        assertThat(arities.intOfNine("a", "bb", "", "", "", "", "g", "7", "hh")).isEqualTo(1_000_006);
        assertThat(arities.floatOfTwelve("7", "a", "", "", "", "", "", "", "", "", "", "kkk")).isEqualTo(4.75f);
        assertThat(arities.doubleOfTen("a", "", "", "", "", "", "", "", "iiii", "7")).isEqualTo(5.125);
        assertThat(arities.none()).isEqualTo(26);
        assertThat(arities.writes).containsExactly("one 7", "secondOfTwo 7", "nameOfTwo ann", "pathOfTwo o-1",
                "spelOverTwo l-r", "firstOfThree 7", "secondOfThree 7", "thirdOfThree 7", "fourthOfFour 7",
                "firstOfFive 7", "spelOverFive l-r 6", "sixthOfSix 7", "intOfFour 7", "seventhOfSeven 7",
                "firstOfEight 7", "sixthOfSeven 7", "spelOverSeven l-r 15", "twelfthOfTwelve 7",
                "thirteenthOfThirteen 7", "longOfFour 7", "floatOfFive 7", "doubleOfSix 7", "intOfNine 7",
                "floatOfTwelve 7", "doubleOfTen 7", "none");
    }

    @Test
    void aKeyedMethodReturningAPrimitiveUnderWeaving() {
        configureWithoutSpring(null);
        WovenCounter counter = new WovenCounter();
        FencingContext.run(new FencingToken("woven-slots:3", 1, "h"),
                () -> assertThat(counter.addTo(3, 5)).isEqualTo(5));
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-slots:3", 1, "h"),
                () -> counter.addTo(4, 5))).isInstanceOf(MissingTokenException.class)
                .hasMessageContaining("woven-slots:4");
        assertThat(counter.total()).isEqualTo(5);
        assertThat(checks(registry, "woven-slots", "accepted")).isEqualTo(1);
    }

    @Test
    void aKeyedClassNestedInAnUnkeyedOneKeepsItsKeyUnderWeaving() {
        configureWithoutSpring(null);
        WovenShelves shelves = new WovenShelves();
        WovenShelves.Shelf shelf = new WovenShelves.Shelf();
        FencingContext.run(new FencingToken("woven-shelves", 1, "h"), () -> shelves.label("top"));
        FencingContext.run(new FencingToken("woven-shelf:a", 1, "h"), () -> shelf.put("a"));
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-shelf:a", 1, "h"), () -> shelf.put("b")))
                .isInstanceOf(MissingTokenException.class).hasMessageContaining("woven-shelf:b");
        assertThat(shelves.labels).containsExactly("top");
        assertThat(shelf.items).containsExactly("a");
        assertThat(checks(registry, "woven-shelf", "accepted")).isEqualTo(1);
        assertThat(checks(registry, "woven-shelves", "accepted")).isEqualTo(1);
    }

    @Test
    @Timeout(60)
    void aBodyThatThrowsKeepsItsExceptionCountsAcceptedAndReleasesTheResource() throws Exception {
        configureWithoutSpring(null);
        WovenCounter counter = new WovenCounter();
        IOException failure = new IOException("disk full");
        try (FencingScope ignored = FencingContext.bind(new FencingToken("woven-counter", 5, "h5"))) {
            assertThatThrownBy(() -> counter.failWith(failure)).isSameAs(failure);
        }
        assertThat(checks(registry, "woven-counter", "accepted")).isEqualTo(1);
        CompletableFuture<Long> other = CompletableFuture.supplyAsync(() -> {
            try (FencingScope ignored = FencingContext.bind(new FencingToken("woven-counter", 6, "h6"))) {
                return counter.addLong(10);
            }
        });
        assertThat(other.get(10, TimeUnit.SECONDS)).isEqualTo(11); // another thread took the resource after the throw
        assertThat(store.maxSeen("woven-counter")).hasValue(6);
    }

    @Test
    @Timeout(60)
    void theResourceIsHeldForTheWholeBodyAndAFencedCallInsideItReentersIt() throws Exception {
        configureWithoutSpring(null);
        WovenCounter counter = new WovenCounter();
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch leave = new CountDownLatch(1);
        CompletableFuture<Long> holder = CompletableFuture.supplyAsync(() -> {
            try (FencingScope ignored = FencingContext.bind(new FencingToken("woven-counter", 7, "h7"))) {
                return counter.inside(() -> {
                    long after = counter.addLong(1); // the same resource, already held by this thread
                    inside.countDown();
                    assertThat(leave.await(10, TimeUnit.SECONDS)).isTrue();
                    return after;
                });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Long> waiting = CompletableFuture.supplyAsync(() -> {
            try (FencingScope ignored = FencingContext.bind(new FencingToken("woven-counter", 8, "h8"))) {
                return counter.addLong(100);
            }
        });
        assertThatThrownBy(() -> waiting.get(300, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
        leave.countDown();
        assertThat(holder.get(10, TimeUnit.SECONDS)).isEqualTo(1);
        assertThat(waiting.get(10, TimeUnit.SECONDS)).isEqualTo(101);
        assertThat(checks(registry, "woven-counter", "accepted")).isEqualTo(3);
    }

    @Test
    void aModeSwitchedAtRuntimeReachesTheCachedBracketOfAWovenMethod() {
        FenceModes modes = FenceModes.enforcing();
        support = new FencingSupport(FenceGuard.builder(store).modes(modes).build(), new FencingMetrics(registry));
        aspect.configure(support);
        WovenLedger ledger = new WovenLedger();
        WovenCounter counter = new WovenCounter();
        FencingContext.run(new FencingToken("woven-ledger", 5, "h"), () -> ledger.append("first"));
        FencingContext.run(new FencingToken("woven-counter", 5, "h"), () -> counter.addLong(1));
        assertThat(support.bracketFor(ReflectionMethods.append(), WovenLedger.class)).isNotNull();
        assertThatThrownBy(() -> ledger.append("refused")).isInstanceOf(MissingTokenException.class);

        modes.set(null, FenceMode.OBSERVE, "test");
        ledger.append("without a token");
        FencingContext.run(new FencingToken("woven-ledger", 3, "zombie"), () -> ledger.append("stale"));
        assertThat(counter.addLong(2)).as("the long advice's callback returns the body's result").isEqualTo(3);
        assertThat(ledger.entries).containsExactly("first", "without a token", "stale");
        assertThat(store.maxSeen("woven-ledger")).hasValue(5);
        assertThat(registry.find("fencing.checks").tag("resource", "woven-ledger").tag("enforced", "false")
                .tag("outcome", "missing").counter().count()).isEqualTo(1);
        assertThat(registry.find("fencing.checks").tag("resource", "woven-ledger").tag("enforced", "false")
                .tag("outcome", "stale").counter().count()).isEqualTo(1);

        modes.set(null, FenceMode.ENFORCE, "test");
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("woven-ledger", 4, "zombie"),
                () -> ledger.append("stale again"))).isInstanceOf(StaleTokenException.class);
        assertThatThrownBy(() -> counter.addLong(3)).isInstanceOf(MissingTokenException.class);
        assertThat(ledger.entries).containsExactly("first", "without a token", "stale");
    }

    /** The woven methods the tests look up. */
    private static final class ReflectionMethods {
        static java.lang.reflect.Method append() {
            try {
                return WovenLedger.class.getMethod("append", String.class);
            } catch (NoSuchMethodException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    @Test
    void keyedAndUnkeyedCallsEnterABracketStoreAndAnObservedOneHandsItTheBody() {
        AtomicInteger entered = new AtomicInteger();
        AtomicInteger fenced = new AtomicInteger();
        BracketFenceStore counting = new BracketFenceStore() {
            @Override
            public Entry enter(String resource, FencingToken token) {
                entered.incrementAndGet();
                return store.enter(resource, token);
            }

            @Override
            public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
                fenced.incrementAndGet();
                return store.fence(resource, token, write);
            }
        };
        support = new FencingSupport(new FenceGuard(counting, null, Duration.ofSeconds(10)),
                new FencingMetrics(registry));
        aspect.configure(support);
        WovenCounter counter = new WovenCounter();
        FencingContext.run(new FencingToken("woven-counter", 1, "h"), () -> {
            counter.addLong(1);
            counter.describe();
        });
        assertThat(entered).hasValue(2);
        assertThat(fenced).hasValue(0);
        FencingContext.run(new FencingToken("woven-slots:1", 1, "h"), () -> counter.addTo(1, 1));
        assertThat(entered).hasValue(3);
        assertThat(fenced).hasValue(0);
        support.modes().set("woven-slots", FenceMode.OBSERVE, "test");
        FencingContext.run(new FencingToken("woven-slots:1", 2, "h"), () -> counter.addTo(1, 1));
        assertThat(Arrays.stream(counter.stackAt(1)).map(StackTraceElement::getClassName))
                .as("observed: the guard's callback").contains(FenceGuard.class.getName());
        assertThat(entered).hasValue(3);
        assertThat(fenced).hasValue(1);
        assertThat(store.maxSeen("woven-slots:1")).hasValue(2);
    }

    @Test
    void aStoreThatOnlyRunsCallbacksFencesWovenCallsThroughItEvenAfterABracketConfiguration() throws Exception {
        configureWithoutSpring(null);
        WovenCounter counter = new WovenCounter();
        FencingContext.run(new FencingToken("woven-counter", 2, "h"), () -> counter.addLong(1)); // routes cached
        aspect.detach(support);
        AtomicInteger fences = new AtomicInteger();
        FenceStore callbacksOnly = callbacksOnly(fences);
        support = new FencingSupport(new FenceGuard(callbacksOnly, null, Duration.ofSeconds(10)),
                new FencingMetrics(registry));
        aspect.configure(support);
        try (FencingScope ignored = FencingContext.bind(new FencingToken("woven-counter", 3, "h3"))) {
            assertThat(counter.addLong(5)).isEqualTo(6);
            assertThat(counter.inside(() -> counter.addInt(1))).isEqualTo(7); // a callback fence inside another
            IOException failure = new IOException("disk full");
            assertThatThrownBy(() -> counter.failWith(failure)).isSameAs(failure);
        }
        assertThatThrownBy(() ->
                FencingContext.run(new FencingToken("woven-counter", 2, "h"), () -> counter.addLong(1)))
                .isInstanceOf(StaleTokenException.class);
        assertThat(fences).hasValue(5);
        assertThat(counter.total()).isEqualTo(8);
        assertThat(checks(registry, "woven-counter", "accepted")).isEqualTo(5);
        assertThat(checks(registry, "woven-counter", "stale")).isEqualTo(1);
    }

    /**
     * An override of a fenced generic method for its type argument, without {@code @Fenced}, is named once, with the
     * fix that works. The inherited {@code put(Object)} it overrides through a bridge was named too, as
     * {@code WovenGenericOverride.put(Object)}, a method the class does not declare, with the fix "repeat @Fenced on
     * WovenGenericBase.put(Object)", which already carries it.
     */
    @Test
    void anUnannotatedOverrideOfAGenericFencedMethodIsNamedOnceWithTheFixThatWorks() {
        FencingSupport hand = new FencingSupport(new FenceGuard(store, new InMemoryTokenIssuer(),
                Duration.ofSeconds(10)), new FencingMetrics(registry));
        assertThatThrownBy(() -> aspect.configure(hand, "dev.fencing.it.weavinggeneric"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("WovenGenericOverride.put(String) gets @Fenced from WovenGenericBase.put(Object)")
                .hasMessageContaining("repeat @Fenced on WovenGenericOverride.put(String)")
                .hasMessageNotContaining("WovenGenericOverride.put(Object)");
        assertThat(aspect.isConfigured()).isFalse();
    }

    /**
     * A fenced method that javac gave a bridge carrying {@code @Fenced} (implementing a generic interface for a type
     * argument, a covariant override, or any of them in a class-level fenced class, whose bridges are public), called
     * through the supertype: checked once per call (not by the bridge a second time), and refused without a token.
     */
    @Test
    void aFencedMethodCalledThroughItsBridgeIsCheckedOnce() {
        configureWithoutSpring(null);
        WovenSavers.KeyedSaver keyed = new WovenSavers.KeyedSaver();
        WovenSavers.TypeSaver typed = new WovenSavers.TypeSaver();
        List<Saving<String>> savers = List.of(keyed, typed);
        Loader loader = new WovenSavers.CovariantLoader();
        for (Saving<String> saver : savers) {
            assertThatThrownBy(() -> saver.save("a")).isInstanceOf(MissingTokenException.class);
        }
        assertThatThrownBy(loader::load).isInstanceOf(MissingTokenException.class);
        FencingContext.run(new FencingToken("woven-saver:a", 2, "h"), () -> keyed.save("a"));
        FencingContext.run(new FencingToken("woven-type-saver", 2, "h"), () -> typed.save("a"));
        FencingContext.run(new FencingToken("woven-loader", 2, "h"),
                () -> assertThat(loader.load()).isEqualTo("covariant"));
        for (String resource : List.of("woven-saver", "woven-type-saver", "woven-loader")) {
            assertThat(checks(registry, resource, "missing")).as(resource).isEqualTo(1);
            assertThat(checks(registry, resource, "accepted")).as(resource).isEqualTo(1);
        }
        assertThat(keyed.saved + typed.saved).isEqualTo(2);
    }

    /**
     * A lambda or method reference implementing an interface method that carries {@code @Fenced}: its class is made at
     * run time and never woven, so each call ran unfenced, and the check of the woven classes passed. It fails now,
     * naming the class that makes it and the interface method.
     */
    @Test
    void aLambdaImplementingAFencedInterfaceMethodFailsTheCheckOfTheWovenClasses() {
        LambdaLedgers.ENTRIES.clear();
        FencingSupport hand = new FencingSupport(new FenceGuard(store, new InMemoryTokenIssuer(),
                Duration.ofSeconds(10)), new FencingMetrics(registry));
        assertThatThrownBy(() -> aspect.configure(hand, "dev.fencing.it.weavinglambda"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("LambdaLedgers (" + LambdaLedgers.class.getName() + ") implements "
                        + "LambdaLedger.append(String), which is @Fenced, with a lambda or a method reference")
                .hasMessageContaining("implement LambdaLedger with a class that puts @Fenced on append");
        assertThat(aspect.isConfigured()).isFalse();
        // what the check stands for: configured without it, both run without a token
        aspect.configure(hand);
        support = hand;
        LambdaLedgers.lambda().append("a");
        LambdaLedgers.reference().append("b");
        assertThat(LambdaLedgers.ENTRIES).containsExactly("a", "b");
    }

    @Configuration
    @EnableFencing(mode = AdviceMode.ASPECTJ, allowInMemoryStore = true)
    static class SeedingConfig {
        /** WovenBookkeeper, under this package, acquires: the startup check requires an issuer for it. */
        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer(Duration.ofMillis(200), 32);
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    /**
     * A bean registered (or component-scanned) before the configuration {@code @EnableFencing} imports makes a fenced
     * write while it is initialized: the aspect is configured before any such bean is created, as PROXY mode's
     * advisor exists before them. It was configured only when its own bean's turn came, so startup failed saying the
     * aspect was not configured and to use {@code @EnableFencing(mode = AdviceMode.ASPECTJ)}, which was declared.
     */
    @Test
    @Timeout(60)
    void aBeanInitializedBeforeTheFencingBeansMakesAFencedWrite() {
        try (var ctx = new AnnotationConfigApplicationContext(WovenSeeder.class, SeedingConfig.class)) {
            assertThat(ctx.getBean(WovenSeeder.class).ledger.entries).containsExactly("seed");
            assertThat(checks(ctx.getBean(MeterRegistry.class), "woven-ledger", "accepted")).isEqualTo(1);
        }
        assertThat(aspect.isConfigured()).isFalse();
    }

    /** A second {@code @EnableFencing}, in PROXY mode, beside {@link AspectJConfig}'s (a library's, say). */
    @Configuration
    @EnableFencing
    static class SecondProxyConfig {
    }

    /**
     * {@code @EnableFencing} declared in both modes in one context: the advisor proxied the woven bean and the woven
     * aspect fenced it too, so each call was checked twice (two {@code accepted} counts per write) when the PROXY
     * declaration came first, and startup failed saying to use ASPECTJ mode, which was declared, when it came last.
     * Startup fails naming both declarations, whichever comes first.
     */
    @Test
    @Timeout(60)
    void enableFencingInBothModesFailsStartupInsteadOfCheckingEachCallTwice() {
        for (Class<?>[] order : List.of(new Class<?>[] {SecondProxyConfig.class, AspectJConfig.class},
                new Class<?>[] {AspectJConfig.class, SecondProxyConfig.class})) {
            assertThatThrownBy(() -> new AnnotationConfigApplicationContext(order).close())
                    .as("registered in the order %s", Arrays.toString(order))
                    .hasRootCauseInstanceOf(FencingConfigurationException.class)
                    .rootCause().hasMessageContaining("@EnableFencing is declared in both modes")
                    .hasMessageContaining(SecondProxyConfig.class.getName() + " (mode PROXY)")
                    .hasMessageContaining(AspectJConfig.class.getName() + " (mode ASPECTJ)");
            assertThat(aspect.isConfigured()).isFalse();
        }
    }

    /**
     * PROXY mode over a woven bean would have the woven aspect refuse every call (rather than fence twice): startup
     * fails instead, naming the method and the mode to use. A new user's trial had it fail only on the first call.
     */
    @Test
    void proxyModeOverAWovenBeanFailsStartupInsteadOfRefusingEveryCall() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(ProxyConfig.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("WovenNotes.note(String) was woven with FencingAspect, but fencing runs in "
                        + "PROXY mode")
                .hasMessageContaining("mode = AdviceMode.ASPECTJ");
    }
}
