package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.MissingTokenException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.reactive.InMemoryReactiveFenceStore;
import dev.fencing.reactive.ReactiveFenceStore;
import dev.fencing.reactive.ReactiveTokenIssuer;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.signing.KeyRing;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.VerificationKey;
import dev.fencing.spring.support.FencingSupport;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Reactive {@code @Fenced} methods through {@code @EnableFencing}: the method keeps its reactive type, its body runs
 * when the result is subscribed, inside the reactive store's check, and every failure is an error signal; without a
 * {@code ReactiveFenceStore} bean the context does not start.
 */
class ReactiveFencedMethodsTest {

    /** A repository whose fenced methods return Mono and Flux, recording when their bodies run. */
    static class ReactiveLedger {
        private final List<String> bodies = new CopyOnWriteArrayList<>();

        /** The bodies run so far (read through the proxy, which has no state of its own). */
        public List<String> bodies() {
            return bodies;
        }

        @Fenced(resource = "entries", key = "#id")
        public Mono<String> write(long id, String entry) {
            bodies.add("write " + entry);
            return Mono.fromSupplier(() -> entry);
        }

        @Fenced(resource = "ledger")
        public Flux<String> writeAll(List<String> entries) {
            bodies.add("writeAll");
            return Flux.fromIterable(entries);
        }

        @Fenced(resource = "ledger")
        public Mono<String> failing() {
            bodies.add("failing");
            throw new IllegalStateException("the body failed before returning its Mono");
        }

        @Fenced(resource = "ledger", acquire = true)
        public Mono<FencingToken> acquiring() {
            bodies.add("acquiring");
            return Mono.deferContextual(context -> Mono.justOrEmpty(ReactiveFencing.current(context, "ledger")));
        }
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class Reactive {
        @Bean
        ReactiveLedger ledger() {
            return new ReactiveLedger();
        }

        @Bean
        InMemoryReactiveFenceStore reactiveFenceStore() {
            return new InMemoryReactiveFenceStore();
        }

        @Bean
        InMemoryTokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    /** A reactive store that records its startup verification. */
    static final class VerifiedReactiveStore implements ReactiveFenceStore {
        final InMemoryReactiveFenceStore delegate = new InMemoryReactiveFenceStore();
        final AtomicInteger verified = new AtomicInteger();

        @Override
        public <T> Flux<T> fence(String resource, FencingToken token, Flux<T> write) {
            return delegate.fence(resource, token, write);
        }

        @Override
        public void verify() {
            verified.incrementAndGet();
        }
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class Verified {
        @Bean
        ReactiveLedger ledger() {
            return new ReactiveLedger();
        }

        @Bean
        VerifiedReactiveStore reactiveFenceStore() {
            return new VerifiedReactiveStore();
        }

        @Bean
        InMemoryTokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class NoIssuer {
        @Bean
        ReactiveLedger ledger() {
            return new ReactiveLedger();
        }

        @Bean
        InMemoryReactiveFenceStore reactiveFenceStore() {
            return new InMemoryReactiveFenceStore();
        }
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class NoReactiveStore {
        @Bean
        ReactiveLedger ledger() {
            return new ReactiveLedger();
        }
    }

    /** A WebFlux/R2DBC-shaped application: a reactive store, no blocking FenceStore, no in-memory fallback. */
    @Configuration
    @EnableFencing
    static class ReactiveOnly {
        @Bean
        ReactiveLedger ledger() {
            return new ReactiveLedger();
        }

        @Bean
        InMemoryReactiveFenceStore reactiveFenceStore() {
            return new InMemoryReactiveFenceStore();
        }

        @Bean
        InMemoryTokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }
    }

    /** A blocking fenced method beside the reactive ones. */
    static class BlockingLedger {
        @Fenced(resource = "ledger")
        public String write(String entry) {
            return entry;
        }
    }

    @Configuration
    static class ReactiveOnlyWithABlockingMethod extends ReactiveOnly {
        @Bean
        BlockingLedger blockingLedger() {
            return new BlockingLedger();
        }
    }

    /** A reactive method whose key reads a Mono parameter: its text would be the Mono's (MonoJust), not the id's. */
    static class MonoKeyedLedger {
        @Fenced(resource = "accounts", key = "#id")
        public Mono<String> deposit(Mono<Long> id) {
            return id.map(String::valueOf);
        }
    }

    @Configuration
    static class ReactiveOnlyWithAMonoKey extends ReactiveOnly {
        @Bean
        MonoKeyedLedger monoKeyedLedger() {
            return new MonoKeyedLedger();
        }
    }

    /** Signed tokens, and a reactive issuer of the application's own that the signer cannot sign. */
    @Configuration
    static class SignedWithAReactiveIssuer extends Reactive {
        @Bean
        TokenVerifier tokenVerifier() {
            return new TokenVerifier(KeyRing.of(VerificationKey.hmac("k1", SigningWiringTest.SECRET)));
        }

        @Bean
        ReactiveTokenIssuer reactiveTokenIssuer(InMemoryTokenIssuer tokenIssuer) {
            return ReactiveTokenIssuer.fromBlocking(tokenIssuer);
        }
    }

    /** A service that only calls others: its one reactive fenced method acquires, and it checks nothing itself. */
    static class Caller {
        @Fenced(resource = "ledger", acquire = true)
        public Mono<FencingToken> call() {
            return Mono.deferContextual(context -> Mono.justOrEmpty(ReactiveFencing.current(context, "ledger")));
        }
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class CallerOnly {
        @Bean
        Caller caller() {
            return new Caller();
        }

        @Bean
        InMemoryTokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }
    }

    private AnnotationConfigApplicationContext context;

    @AfterEach
    void close() {
        if (context != null) {
            context.close();
        }
    }

    private ReactiveLedger ledger() {
        context = new AnnotationConfigApplicationContext(Reactive.class);
        return context.getBean(ReactiveLedger.class);
    }

    /** Checks of the unkeyed resource {@code ledger}. */
    private double checks(String outcome) {
        return checks("ledger", outcome);
    }

    private double checks(String resource, String outcome) {
        var counter = context.getBean(MeterRegistry.class).find("fencing.checks").tag("resource", resource)
                .tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    @SuppressWarnings("unchecked")
    void anAcceptedTokenRunsTheBodyOnSubscriptionAndKeepsTheMonoType() {
        ReactiveLedger ledger = ledger();
        Object result = ledger.write(1, "a");
        assertThat(result).isInstanceOf(Mono.class);
        assertThat(ledger.bodies()).isEmpty();

        StepVerifier.create(((Mono<Object>) result)
                .contextWrite(ReactiveFencing.bind(new FencingToken("entries:1", 5, "h"))))
                .expectNext("a").verifyComplete();

        assertThat(ledger.bodies()).containsExactly("write a");
        assertThat(context.getBean(InMemoryReactiveFenceStore.class).maxSeen("entries:1")).hasValue(5);
        assertThat(checks("entries", "accepted")).isEqualTo(1);
    }

    @Test
    void aFluxMethodStaysAFluxAndEmitsEveryValue() {
        ReactiveLedger ledger = ledger();
        Flux<String> result = ledger.writeAll(List.of("a", "b", "c"));

        StepVerifier.create(result.contextWrite(ReactiveFencing.bind(new FencingToken("ledger", 2, "h"))))
                .expectNext("a", "b", "c").verifyComplete();
        assertThat(ledger.bodies()).containsExactly("writeAll");
    }

    @Test
    void aStaleTokenIsAnErrorSignalNotAnException() {
        ReactiveLedger ledger = ledger();
        ledger.write(1, "new").contextWrite(ReactiveFencing.bind(new FencingToken("entries:1", 9, "h9"))).block();
        ledger.bodies().clear();

        Mono<String> stale = ledger.write(1, "old"); // nothing thrown here
        StepVerifier.create(stale.contextWrite(ReactiveFencing.bind(new FencingToken("entries:1", 8, "h8"))))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(StaleTokenException.class)
                        .hasMessageContaining("ReactiveLedger.write(long, String)"))
                .verify();

        assertThat(ledger.bodies()).isEmpty();
        assertThat(checks("entries", "stale")).isEqualTo(1);
    }

    @Test
    void noTokenIsAMissingTokenErrorSignal() {
        ReactiveLedger ledger = ledger();

        StepVerifier.create(ledger.write(3, "x")).expectError(MissingTokenException.class).verify();

        assertThat(ledger.bodies()).isEmpty();
        assertThat(checks("entries", "missing")).isEqualTo(1);
    }

    @Test
    void anAcquiringMethodRunsUnderAFreshLockReleasedAfterwards() {
        ReactiveLedger ledger = ledger();
        InMemoryTokenIssuer issuer = context.getBean(InMemoryTokenIssuer.class);

        StepVerifier.create(ledger.acquiring())
                .assertNext(token -> assertThat(token.value()).isEqualTo(issuer.highestIssued("ledger")))
                .verifyComplete();

        long deadline = System.nanoTime() + 10_000_000_000L;
        while (issuer.isHeld("ledger") && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(issuer.isHeld("ledger")).isFalse();
    }

    @Test
    void eachSubscriptionRunsTheBodyAgain() {
        ReactiveLedger ledger = ledger();
        Mono<String> write = ledger.write(4, "twice");

        write.contextWrite(ReactiveFencing.bind(new FencingToken("entries:4", 1, "h1"))).block();
        write.contextWrite(ReactiveFencing.bind(new FencingToken("entries:4", 2, "h2"))).block();

        assertThat(ledger.bodies()).containsExactly("write twice", "write twice");
        assertThat(checks("entries", "accepted")).isEqualTo(2);
    }

    /** What a woven call hands the aspect's path: the unproxied target and its arguments. */
    record WovenCall(ReactiveLedger target, long id, String entry) {
        Object[] args() {
            return new Object[] {id, entry};
        }

        Object proceed() {
            return target.write(id, entry);
        }
    }

    /**
     * The path the woven {@code FencingAspect} takes ({@code FencingSupport.invoke} with a join point, arguments
     * asked for only when keyed): the same deferred body and error signals as the proxy's.
     */
    @Test
    @SuppressWarnings("unchecked")
    void theWovenAspectsPathFencesOnSubscriptionToo() throws Throwable {
        ledger();
        FencingSupport support = context.getBean(FencingSupport.class);
        ReactiveLedger target = new ReactiveLedger();
        var method = ReactiveLedger.class.getMethod("write", long.class, String.class);

        Object result = support.invoke(method, ReactiveLedger.class, new WovenCall(target, 6, "woven"),
                WovenCall::args, WovenCall::proceed);
        assertThat(result).isInstanceOf(Mono.class);
        assertThat(target.bodies()).isEmpty();

        StepVerifier.create(((Mono<Object>) result).contextWrite(ReactiveFencing.bind(
                new FencingToken("entries:6", 3, "h")))).expectNext("woven").verifyComplete();
        assertThat(target.bodies()).containsExactly("write woven");

        Object stale = support.invoke(method, ReactiveLedger.class, new WovenCall(target, 6, "stale"),
                WovenCall::args, WovenCall::proceed);
        StepVerifier.create(((Mono<Object>) stale).contextWrite(ReactiveFencing.bind(
                new FencingToken("entries:6", 2, "h2")))).expectError(StaleTokenException.class).verify();
        assertThat(target.bodies()).containsExactly("write woven");
    }

    @Test
    void aBodyThatThrowsIsAnErrorSignalOnSubscription() {
        ReactiveLedger ledger = ledger();

        Mono<String> failing = ledger.failing(); // nothing thrown, nothing run
        assertThat(ledger.bodies()).isEmpty();
        StepVerifier.create(failing.contextWrite(ReactiveFencing.bind(new FencingToken("ledger", 1, "h"))))
                .expectErrorMessage("the body failed before returning its Mono").verify();

        assertThat(ledger.bodies()).containsExactly("failing");
        assertThat(checks("accepted")).isEqualTo(1);
    }

    @Test
    void theReactiveStoreIsVerifiedAtStartup() {
        context = new AnnotationConfigApplicationContext(Verified.class);
        assertThat(context.getBean(VerifiedReactiveStore.class).verified).hasValue(1);
    }

    @Test
    void anAcquiringReactiveMethodWithoutAnIssuerFailsStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(NoIssuer.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("ReactiveLedger.acquiring()")
                .hasMessageContaining("ReactiveTokenIssuer")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("ReactiveLedger.write(long, String)"));
    }

    @Test
    void aReactiveApplicationNeedsNoBlockingFenceStore() {
        context = new AnnotationConfigApplicationContext(ReactiveOnly.class);
        ReactiveLedger ledger = context.getBean(ReactiveLedger.class);
        FencingToken token = new FencingToken("entries:1", 3, "holder");
        StepVerifier.create(ledger.write(1, "a").contextWrite(ReactiveFencing.bind(token)))
                .expectNext("a").verifyComplete();
        StepVerifier.create(ledger.write(1, "zombie").contextWrite(ReactiveFencing.bind(
                        new FencingToken("entries:1", 2, "zombie"))))
                .expectError(StaleTokenException.class).verify(Duration.ofSeconds(10));
    }

    @Test
    void aBlockingFencedMethodWithOnlyAReactiveStoreFailsStartupNamingIt() {
        assertThatThrownBy(() ->
                context = new AnnotationConfigApplicationContext(ReactiveOnlyWithABlockingMethod.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("BlockingLedger.write(String) is @Fenced and does not return a reactive type")
                .hasMessageContaining("only a ReactiveFenceStore")
                .hasMessageNotContaining("ReactiveLedger.write(long, String) is @Fenced");
    }

    @Test
    void aKeyReadingAMonoParameterFailsStartup() {
        assertThatThrownBy(() -> context = new AnnotationConfigApplicationContext(ReactiveOnlyWithAMonoKey.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("MonoKeyedLedger.deposit(Mono)")
                .hasMessageContaining("'#id'").hasMessageContaining("reactor.core.publisher.Mono")
                .hasMessageContaining("a value still to come");
    }

    @Test
    void anUnsignedReactiveIssuerUnderSignedTokensFailsStartupForTheAcquiringMethod() {
        assertThatThrownBy(() -> context = new AnnotationConfigApplicationContext(SignedWithAReactiveIssuer.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("@Fenced(acquire = true) on ReactiveFencedMethodsTest.ReactiveLedger.acquiring()")
                .hasMessageContaining("ReactiveTokenIssuer bean is not signed");
    }

    @Test
    void aServiceWhoseReactiveFencedMethodsOnlyAcquireNeedsNoReactiveStore() {
        context = new AnnotationConfigApplicationContext(CallerOnly.class);
        Caller caller = context.getBean(Caller.class);
        StepVerifier.create(caller.call())
                .assertNext(token -> assertThat(token.resource()).isEqualTo("ledger"))
                .verifyComplete();
    }

    @Test
    void withoutAReactiveFenceStoreTheContextDoesNotStart() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(NoReactiveStore.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("ReactiveLedger.write(long, String)")
                .hasMessageContaining("when its publisher is subscribed")
                .hasMessageContaining("ReactiveFenceStore bean");
    }

    /** The application's ObservationRegistry reaches the reactive fence: a check and a wait for a lock are timed. */
    @Test
    void theApplicationsObservationRegistryTimesReactiveChecksAndLockWaits() throws InterruptedException {
        context = new AnnotationConfigApplicationContext();
        context.register(Reactive.class);
        context.registerBean(io.micrometer.observation.ObservationRegistry.class, () -> {
            io.micrometer.observation.ObservationRegistry observations =
                    io.micrometer.observation.ObservationRegistry.create();
            observations.observationConfig().observationHandler(
                    new io.micrometer.core.instrument.observation.DefaultMeterObservationHandler(
                            context.getBean(MeterRegistry.class)));
            return observations;
        });
        context.refresh();
        ReactiveLedger ledger = context.getBean(ReactiveLedger.class);
        StepVerifier.create(ledger.acquiring()).expectNextCount(1).verifyComplete();
        StepVerifier.create(ledger.writeAll(List.of("a")).contextWrite(ReactiveFencing.bind(
                new FencingToken("ledger", Long.MAX_VALUE - 1, "h")))).expectNext("a").verifyComplete();

        MeterRegistry meters = context.getBean(MeterRegistry.class);
        // an observation stops after its publisher's last signal reached the subscriber, maybe on another thread,
        // and its handler registers the timer before it records into it: wait for the recordings, not the timers
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while ((timed(meters, "fencing.acquire", "acquired") < 1 || timed(meters, "fencing.check", "accepted") < 1)
                && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(meters.get("fencing.acquire").tag("resource", "ledger").tag("outcome", "acquired").timer()
                .count()).isEqualTo(1);
        assertThat(meters.get("fencing.check").tag("resource", "ledger").tag("outcome", "accepted").timer()
                .count()).isEqualTo(1);
    }

    private static long timed(MeterRegistry meters, String name, String outcome) {
        io.micrometer.core.instrument.Timer timer =
                meters.find(name).tag("resource", "ledger").tag("outcome", outcome).timer();
        return timer == null ? 0 : timer.count();
    }
}
