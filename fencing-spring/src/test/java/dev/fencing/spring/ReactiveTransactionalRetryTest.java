package dev.fencing.spring;

import dev.fencing.annotation.Fenced;
import dev.fencing.reactive.InMemoryReactiveFenceStore;
import dev.fencing.reactive.ReactiveFenceStore;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.ReactiveTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.reactive.AbstractReactiveTransactionManager;
import org.springframework.transaction.reactive.GenericReactiveTransaction;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A reactive method with {@code @Transactional} beside {@code @Fenced}: Spring's reactive transaction interceptor,
 * outside the fence, proceeds with the proxy's method invocation again on every subscription, and that invocation
 * had gone past the fence on the first one. So a {@code retry()} around the returned publisher ran the body without
 * its check: a trial's token 1, refused against max_seen 120, was written by the retry. Every subscription must be
 * checked.
 */
@Timeout(60)
class ReactiveTransactionalRetryTest {

    private AnnotationConfigApplicationContext context;

    @AfterEach
    void close() {
        if (context != null) {
            context.close();
        }
    }

    static class Ledger {
        private final List<String> written = new CopyOnWriteArrayList<>();
        private final AtomicInteger bodies = new AtomicInteger();

        /** What was written (read through the proxy, which has no state of its own). */
        public List<String> written() {
            return written;
        }

        /** How many times the method's body ran. */
        public int bodies() {
            return bodies.get();
        }

        @Fenced(resource = "ledger")
        @Transactional
        public Mono<String> write(String entry) {
            bodies.incrementAndGet();
            return Mono.fromCallable(() -> {
                written.add(entry);
                return entry;
            });
        }

        @Fenced(resource = "ledger")
        @Transactional
        public Flux<String> writeAll(List<String> entries) {
            bodies.incrementAndGet();
            return Flux.fromIterable(entries).doOnNext(written::add);
        }
    }

    /** A transaction manager with nothing behind it: what matters is the interceptor it brings. */
    static class NoOpReactiveTransactionManager extends AbstractReactiveTransactionManager {
        final AtomicInteger begun = new AtomicInteger();

        @Override
        protected Object doGetTransaction(TransactionSynchronizationManager synchronizationManager) {
            return new Object();
        }

        @Override
        protected Mono<Void> doBegin(TransactionSynchronizationManager synchronizationManager, Object transaction,
                                     TransactionDefinition definition) {
            return Mono.fromRunnable(begun::incrementAndGet);
        }

        @Override
        protected Mono<Void> doCommit(TransactionSynchronizationManager synchronizationManager,
                                      GenericReactiveTransaction status) {
            return Mono.empty();
        }

        @Override
        protected Mono<Void> doRollback(TransactionSynchronizationManager synchronizationManager,
                                        GenericReactiveTransaction status) {
            return Mono.empty();
        }
    }

    @Configuration
    @EnableFencing
    @EnableTransactionManagement(order = 0)
    static class Config {
        @Bean
        Ledger ledger() {
            return new Ledger();
        }

        @Bean
        ReactiveFenceStore reactiveFenceStore() {
            return new InMemoryReactiveFenceStore();
        }

        @Bean
        ReactiveTransactionManager transactionManager() {
            return new NoOpReactiveTransactionManager();
        }
    }

    private Ledger ledger() {
        context = new AnnotationConfigApplicationContext(Config.class);
        return context.getBean(Ledger.class);
    }

    @Test
    void aRetriedMonoIsCheckedOnEveryAttempt() {
        Ledger ledger = ledger();
        ledger.write("first").contextWrite(ReactiveFencing.bind(new FencingToken("ledger", 120, "b"))).block();

        StepVerifier.create(ledger.write("zombie").retry(2)
                        .contextWrite(ReactiveFencing.bind(new FencingToken("ledger", 1, "a"))))
                .expectError(StaleTokenException.class).verify();
        assertThat(ledger.written()).containsExactly("first");
        assertThat(context.getBean(NoOpReactiveTransactionManager.class).begun).hasValue(4);
    }

    @Test
    void aRetriedFluxIsCheckedOnEveryAttempt() {
        Ledger ledger = ledger();
        ledger.writeAll(List.of("first")).contextWrite(ReactiveFencing.bind(new FencingToken("ledger", 120, "b")))
                .blockLast();

        StepVerifier.create(ledger.writeAll(List.of("zombie")).retry(2)
                        .contextWrite(ReactiveFencing.bind(new FencingToken("ledger", 1, "a"))))
                .expectError(StaleTokenException.class).verify();
        assertThat(ledger.written()).containsExactly("first");
    }

    @Test
    void aResubscribedPublisherOfACurrentHolderWritesEachTime() {
        Ledger ledger = ledger();
        Mono<String> write = ledger.write("again");
        write.contextWrite(ReactiveFencing.bind(new FencingToken("ledger", 5, "h"))).block();
        write.contextWrite(ReactiveFencing.bind(new FencingToken("ledger", 6, "h"))).block();
        StepVerifier.create(write.contextWrite(ReactiveFencing.bind(new FencingToken("ledger", 4, "z"))))
                .expectError(StaleTokenException.class).verify();
        assertThat(ledger.written()).containsExactly("again", "again");
        // the method runs on each subscription the fence lets through (the transaction defers it), not on the refused
        assertThat(ledger.bodies()).isEqualTo(2);
    }
}
