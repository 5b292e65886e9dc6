package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.MissingTokenException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.reactive.InMemoryReactiveFenceStore;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.rule.StaleTokenException;
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

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

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

        @Fenced(resource = "ledger", key = "#id")
        public Mono<String> write(long id, String entry) {
            bodies.add("write " + entry);
            return Mono.fromSupplier(() -> entry);
        }

        @Fenced(resource = "ledger")
        public Flux<String> writeAll(List<String> entries) {
            bodies.add("writeAll");
            return Flux.fromIterable(entries);
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

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class NoReactiveStore {
        @Bean
        ReactiveLedger ledger() {
            return new ReactiveLedger();
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

    private double checks(String outcome) {
        var counter = context.getBean(MeterRegistry.class).find("fencing.checks").tag("resource", "ledger")
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

        StepVerifier.create(((Mono<Object>) result).contextWrite(ReactiveFencing.bind(new FencingToken("ledger:1", 5, "h"))))
                .expectNext("a").verifyComplete();

        assertThat(ledger.bodies()).containsExactly("write a");
        assertThat(context.getBean(InMemoryReactiveFenceStore.class).maxSeen("ledger:1")).hasValue(5);
        assertThat(checks("accepted")).isEqualTo(1);
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
        ledger.write(1, "new").contextWrite(ReactiveFencing.bind(new FencingToken("ledger:1", 9, "h9"))).block();
        ledger.bodies().clear();

        Mono<String> stale = ledger.write(1, "old"); // nothing thrown here
        StepVerifier.create(stale.contextWrite(ReactiveFencing.bind(new FencingToken("ledger:1", 8, "h8"))))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(StaleTokenException.class)
                        .hasMessageContaining("ReactiveLedger.write(long, String)"))
                .verify();

        assertThat(ledger.bodies()).isEmpty();
        assertThat(checks("stale")).isEqualTo(1);
    }

    @Test
    void noTokenIsAMissingTokenErrorSignal() {
        ReactiveLedger ledger = ledger();

        StepVerifier.create(ledger.write(3, "x")).expectError(MissingTokenException.class).verify();

        assertThat(ledger.bodies()).isEmpty();
        assertThat(checks("missing")).isEqualTo(1);
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

        write.contextWrite(ReactiveFencing.bind(new FencingToken("ledger:4", 1, "h1"))).block();
        write.contextWrite(ReactiveFencing.bind(new FencingToken("ledger:4", 2, "h2"))).block();

        assertThat(ledger.bodies()).containsExactly("write twice", "write twice");
        assertThat(checks("accepted")).isEqualTo(2);
    }

    @Test
    void withoutAReactiveFenceStoreTheContextDoesNotStart() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(NoReactiveStore.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("ReactiveLedger.write(long, String)")
                .hasMessageContaining("ReactiveLedger.acquiring()")
                .hasMessageContaining("Mono")
                .hasMessageContaining("ReactiveFenceStore bean");
    }
}
