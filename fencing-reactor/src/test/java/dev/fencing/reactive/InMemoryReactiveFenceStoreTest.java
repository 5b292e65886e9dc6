package dev.fencing.reactive;

import dev.fencing.guard.FencePoint;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.OutOfRangeTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The in-memory reactive store: the rule's verdicts, one write per resource at a time in subscription order, the
 * check made when the turn starts, and cancelled waiters that neither write nor hold up the next.
 */
class InMemoryReactiveFenceStoreTest {

    private final InMemoryReactiveFenceStore store = new InMemoryReactiveFenceStore();

    private static FencingToken token(long value) {
        return new FencingToken("r", value, "h" + value);
    }

    private Mono<String> write(String name, FencingToken token) {
        return store.fence("r", token, Flux.just(name)).single();
    }

    @Test
    void judgesByTheFenceRule() {
        StepVerifier.create(write("a", token(5))).expectNext("a").verifyComplete();
        StepVerifier.create(write("same holder", token(5))).expectNext("same holder").verifyComplete();
        StepVerifier.create(write("stale", token(4))).expectError(StaleTokenException.class).verify();
        StepVerifier.create(write("duplicate", new FencingToken("r", 5, "other")))
                .expectError(DuplicateTokenException.class).verify();
        assertThat(store.maxSeen("r")).hasValue(5);

        InMemoryReactiveFenceStore bounded = new InMemoryReactiveFenceStore(10);
        bounded.fence("r", token(1), Flux.just(1)).blockLast();
        StepVerifier.create(bounded.fence("r", token(12), Flux.just(2))).expectError(OutOfRangeTokenException.class)
                .verify();
    }

    @Test
    void aTokenForAnotherResourceIsRefusedAtAssembly() {
        assertThatThrownBy(() -> store.fence("other", token(1), Flux.empty()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'other'");
    }

    @Test
    void nothingHappensUntilSubscribed() {
        AtomicInteger subscribed = new AtomicInteger();
        Flux<String> fenced = store.fence("r", token(1),
                Flux.just("x").doOnSubscribe(s -> subscribed.incrementAndGet()));
        assertThat(subscribed).hasValue(0);
        assertThat(store.maxSeen("r")).isEmpty();
        fenced.blockLast();
        assertThat(subscribed).hasValue(1);
    }

    @Test
    void writesTakeTurnsAndTheCheckIsMadeWhenTheTurnStarts() {
        Sinks.Empty<Void> first = Sinks.empty();
        List<String> events = new CopyOnWriteArrayList<>();
        Disposable holder = store.fence("r", token(1),
                first.asMono().then(Mono.fromRunnable(() -> events.add("1"))).flux())
                .subscribe();
        // checked with token 3 while 1 holds the turn: it waits, and 2 behind it is judged after 3 was accepted
        Disposable three = store.fence("r", token(3), Mono.fromRunnable(() -> events.add("3")).flux()).subscribe();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        Disposable two = store.fence("r", token(2), Mono.fromRunnable(() -> events.add("2")).flux())
                .subscribe(null, errors::add);
        assertThat(events).isEmpty();
        assertThat(store.maxSeen("r")).hasValue(1);

        first.tryEmitEmpty();

        assertThat(events).containsExactly("1", "3");
        assertThat(errors).singleElement().isInstanceOf(StaleTokenException.class);
        holder.dispose();
        three.dispose();
        two.dispose();
    }

    @Test
    void aCancelledWaiterNeverWritesAndNeverHoldsUpTheNext() {
        Sinks.Empty<Void> first = Sinks.empty();
        List<String> events = new CopyOnWriteArrayList<>();
        store.fence("r", token(1), first.asMono().then(Mono.fromRunnable(() -> events.add("1"))).flux()).subscribe();
        Disposable cancelled = store.fence("r", token(2), Mono.fromRunnable(() -> events.add("2")).flux()).subscribe();
        store.fence("r", token(3), Mono.fromRunnable(() -> events.add("3")).flux()).subscribe();

        cancelled.dispose();
        first.tryEmitEmpty();

        assertThat(events).containsExactly("1", "3");
        assertThat(store.maxSeen("r")).hasValue(3);
    }

    @Test
    void aCancelledWriteGivesUpItsTurn() {
        Disposable holder = store.fence("r", token(1), Flux.<String>never()).subscribe();
        List<String> events = new CopyOnWriteArrayList<>();
        store.fence("r", token(2), Mono.fromRunnable(() -> events.add("2")).flux()).subscribe();
        assertThat(events).isEmpty();

        holder.dispose();

        assertThat(events).containsExactly("2");
    }

    @Test
    void aFailedWriteGivesUpItsTurnAndKeepsMaxSeenAdvanced() {
        StepVerifier.create(store.fence("r", token(4), Flux.error(new IllegalStateException("boom"))))
                .expectErrorMessage("boom").verify();
        StepVerifier.create(write("next", token(5))).expectNext("next").verifyComplete();
        assertThat(store.maxSeen("r")).hasValue(5);
    }

    @Test
    void aWriteNestedInAnotherOnTheSameResourceRunsInItsTurn() {
        Flux<String> nested = store.fence("r", token(2), Flux.just("inner"));
        StepVerifier.create(store.fence("r", token(2), nested)).expectNext("inner").verifyComplete();
    }

    @Test
    void aLongQueueOfSynchronousWritesDoesNotOverflowTheStack() {
        Sinks.Empty<Void> first = Sinks.empty();
        store.fence("r", token(1), first.asMono().flux()).subscribe();
        AtomicInteger done = new AtomicInteger();
        for (long value = 2; value <= 20_000; value++) {
            store.fence("r", token(value), Flux.just(value)).subscribe(v -> done.incrementAndGet());
        }
        first.tryEmitEmpty();
        assertThat(done).hasValue(19_999);
        assertThat(store.maxSeen("r")).hasValue(20_000);
    }

    /**
     * Many tokens, shuffled, subscribed in parallel through the reactive guard, with writes that complete on another
     * thread: the writes are applied in increasing token order and every refused one was stale.
     */
    @Test
    void concurrentSubscriptionsApplyInTokenOrder() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        FencePoint point = new FencePoint("Ledger.append(long)", "r", null, null, false, new FencingMetrics(registry));
        ReactiveFenceGuard guard = ReactiveFenceGuard.builder(store).build();
        List<Long> values = new ArrayList<>(LongStream.rangeClosed(1, 400).boxed().toList());
        Collections.shuffle(values);
        List<Long> applied = Collections.synchronizedList(new ArrayList<>());
        List<Throwable> refused = new CopyOnWriteArrayList<>();

        Flux.fromIterable(values)
                .flatMap(value -> guard.fence(point, new Object[0], () -> Mono.delay(Duration.ofMillis(value % 3))
                                        .then(Mono.fromRunnable(() -> applied.add(value))))
                                .contextWrite(ReactiveFencing.bind(token(value)))
                                .subscribeOn(Schedulers.parallel())
                                .onErrorResume(e -> {
                                    refused.add(e);
                                    return Mono.empty();
                                }),
                        64)
                .blockLast(Duration.ofSeconds(60));

        assertThat(applied).isSorted().doesNotHaveDuplicates().contains(400L);
        assertThat(refused).allSatisfy(e -> assertThat(e).isInstanceOf(StaleTokenException.class));
        assertThat(applied.size() + refused.size()).isEqualTo(400);
        assertThat(registry.find("fencing.checks").tag("outcome", "accepted").counter().count())
                .isEqualTo(applied.size());
        assertThat(registry.find("fencing.checks").tag("outcome", "stale").counter().count())
                .isEqualTo(refused.size());
        assertThat(store.maxSeen("r")).hasValue(400);
    }
}
