package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.reactive.InMemoryReactiveFenceStore;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An application whose fenced methods are all reactive (a WebFlux application on R2DBC has no {@code DataSource})
 * needs a {@code ReactiveFenceStore} only: it starts without a blocking {@code FenceStore}. A blocking fenced method
 * still needs one, and fails startup without it, as does an application with neither store.
 */
class ReactiveOnlyApplicationTest {

    private AnnotationConfigApplicationContext context;

    @AfterEach
    void close() {
        if (context != null) {
            context.close();
        }
    }

    static class ReactiveLedger {
        @Fenced(resource = "ledger")
        public Mono<String> write(String entry) {
            return Mono.just(entry);
        }
    }

    static class BlockingLedger {
        @Fenced(resource = "ledger")
        public String write(String entry) {
            return entry;
        }
    }

    @Configuration
    @EnableFencing
    static class ReactiveOnly {
        @Bean
        ReactiveLedger reactiveLedger() {
            return new ReactiveLedger();
        }

        @Bean
        InMemoryReactiveFenceStore reactiveFenceStore() {
            return new InMemoryReactiveFenceStore();
        }
    }

    @Configuration
    @EnableFencing
    static class WithABlockingMethod {
        @Bean
        BlockingLedger blockingLedger() {
            return new BlockingLedger();
        }
    }

    @Configuration
    @EnableFencing
    static class NoStoreAtAll {
        @Bean
        BlockingLedger blockingLedger() {
            return new BlockingLedger();
        }
    }

    @Test
    void aReactiveOnlyApplicationStartsWithoutABlockingStore() {
        context = new AnnotationConfigApplicationContext(ReactiveOnly.class);
        ReactiveLedger ledger = context.getBean(ReactiveLedger.class);
        StepVerifier.create(ledger.write("a").contextWrite(ReactiveFencing.bind(new FencingToken("ledger", 2, "h"))))
                .expectNext("a").verifyComplete();
        StepVerifier.create(ledger.write("b").contextWrite(ReactiveFencing.bind(new FencingToken("ledger", 1, "h"))))
                .expectError(StaleTokenException.class).verify(Duration.ofSeconds(10));
    }

    @Test
    void aBlockingFencedMethodBesideThemStillNeedsABlockingStore() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(ReactiveOnly.class, WithABlockingMethod.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("no FenceStore bean")
                .hasMessageContaining("BlockingLedger");
    }

    @Test
    void withNeitherStoreStartupFailsAsBefore() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(NoStoreAtAll.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("no FenceStore bean");
    }
}
