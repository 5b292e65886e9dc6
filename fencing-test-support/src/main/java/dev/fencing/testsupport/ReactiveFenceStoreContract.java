package dev.fencing.testsupport;

import dev.fencing.context.MissingTokenException;
import dev.fencing.reactive.ReactiveFenceStore;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The behaviour every {@link ReactiveFenceStore} must have, the reactive form of {@link FenceStoreContract}: each row
 * of the rule, the write subscribed only when accepted, its own signals relayed unchanged, concurrent subscriptions
 * applied in token order. A store of your own passes it with a test class that extends this one and provides
 * {@link #store()}; a store that needs a unit of work around each call (a reactive transaction) overrides
 * {@link #inUnitOfWork(Flux)}. A store that keeps max_seen outside the instance (a table, a server) also overrides
 * {@link #otherStore()} with a second instance over the same data: without it, a store that keeps max_seen in the
 * instance passes. Needs {@code fencing-reactor} and {@code reactor-test} on the test class path (optional
 * dependencies of this module).
 */
public abstract class ReactiveFenceStoreContract {

    /** How long any one step may take before the test fails. */
    protected static final Duration STEP = Duration.ofSeconds(30);

    /** The store under test; may return the same instance every time. */
    protected abstract ReactiveFenceStore store();

    /**
     * Another instance of the store over the same data, as another process (or this one after a restart) builds it:
     * it must judge against what {@link #store()} accepted. Its calls run in {@link #inUnitOfWork(Flux)} too, so it
     * must work in the same unit of work (for a database store: a second store over the same table and connection
     * factory). The default is {@link #store()} itself, right for a store whose state lives in its instance only
     * (the in-memory store); a durable or shared store overrides it, or the contract cannot tell it from one that
     * forgets max_seen when the instance goes.
     */
    protected ReactiveFenceStore otherStore() {
        return store();
    }

    /**
     * Wraps one fenced call in the unit of work the store needs (for a database store, the caller's reactive
     * transaction, such as {@code transactionalOperator::transactional}); subscribed once per call. Default: as is.
     */
    protected <T> Flux<T> inUnitOfWork(Flux<T> work) {
        return work;
    }

    /** A resource name no other test uses. */
    protected String freshResource() {
        return "contract-" + UUID.randomUUID();
    }

    protected static FencingToken token(String resource, long value, String holder) {
        return new FencingToken(resource, value, holder);
    }

    /** A fenced write that records {@code label} into {@code log} when subscribed and emits it, in a unit of work. */
    protected Flux<String> write(String resource, FencingToken token, List<String> log, String label) {
        return write(store(), resource, token, log, label);
    }

    private Flux<String> write(ReactiveFenceStore through, String resource, FencingToken token, List<String> log,
                               String label) {
        return inUnitOfWork(through.fence(resource, token, Flux.defer(() -> {
            log.add(label);
            return Flux.just(label);
        })));
    }

    /** Runs {@link #write} to completion and checks that it emitted its label. */
    protected void accepted(String resource, FencingToken token, List<String> log, String label) {
        StepVerifier.create(write(resource, token, log, label)).expectNext(label).expectComplete().verify(STEP);
    }

    @Test
    void firstTokenForAResourceIsAccepted() {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        accepted(r, token(r, 1, "a"), log, "w1");
        assertThat(log).containsExactly("w1");
    }

    @Test
    void nothingHappensUntilSubscribed() {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        Flux<String> assembled = write(r, token(r, 5, "a"), log, "later");
        accepted(r, token(r, 6, "b"), log, "6");
        StepVerifier.create(assembled).expectError(StaleTokenException.class).verify(STEP);
        assertThat(log).containsExactly("6");
    }

    /**
     * Every subscription is judged on its own: a fenced call subscribed again (a {@code retry()}, a
     * {@code repeat()}, a second subscriber) after a larger token was accepted is refused as stale, its write not
     * run again; a store that judged only the first subscription would let the retry write as a zombie.
     */
    @Test
    void everySubscriptionIsJudgedAgain() {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        Flux<String> fenced = write(r, token(r, 5, "a"), log, "5");
        StepVerifier.create(fenced).expectNext("5").expectComplete().verify(STEP);
        accepted(r, token(r, 6, "b"), log, "6");
        StepVerifier.create(fenced).expectError(StaleTokenException.class).verify(STEP);
        assertThat(log).containsExactly("5", "6");
    }

    /**
     * A second instance over the same data ({@link #otherStore()}: another process, a restart) judges against what
     * the first accepted, and the first against what the second accepted: max_seen lives in the data, not in an
     * instance.
     */
    @Test
    void anotherInstanceOverTheSameDataJudgesAgainstWhatThisOneAccepted() {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        accepted(r, token(r, 10, "a"), log, "10");
        ReactiveFenceStore other = otherStore();
        StepVerifier.create(write(other, r, token(r, 9, "z"), log, "9"))
                .expectError(StaleTokenException.class).verify(STEP);
        StepVerifier.create(write(other, r, token(r, 10, "z"), log, "10 z"))
                .expectError(DuplicateTokenException.class).verify(STEP);
        StepVerifier.create(write(other, r, token(r, 11, "b"), log, "11")).expectNext("11").expectComplete()
                .verify(STEP);
        StepVerifier.create(write(r, token(r, 10, "a"), log, "10 again"))
                .expectError(StaleTokenException.class).verify(STEP);
        assertThat(log).containsExactly("10", "11");
    }

    @Test
    void largerTokenIsAcceptedAndAdvances() {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        accepted(r, token(r, 33, "a"), log, "33");
        accepted(r, token(r, 34, "b"), log, "34");
        StepVerifier.create(write(r, token(r, 33, "a"), log, "33 again"))
                .expectError(StaleTokenException.class).verify(STEP);
        assertThat(log).containsExactly("33", "34");
    }

    @Test
    void equalTokenFromTheSameHolderIsAccepted() {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        accepted(r, token(r, 7, "lease-1"), log, "first");
        accepted(r, token(r, 7, "lease-1"), log, "second");
        accepted(r, token(r, 7, "lease-1"), log, "third");
        assertThat(log).containsExactly("first", "second", "third");
    }

    @Test
    void equalTokenFromAnotherHolderIsRejectedAsDuplicate() {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        accepted(r, token(r, 7, "lease-1"), log, "first");
        FencingToken other = token(r, 7, "lease-2");
        StepVerifier.create(write(r, other, log, "second"))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(DuplicateTokenException.class, d -> {
                    assertThat(d.verdict()).isEqualTo(Verdict.REJECT_DUPLICATE);
                    assertThat(d.presented()).isSameAs(other);
                    assertThat(d.maxSeen()).isEqualTo(7);
                    assertThat(d.resource()).isEqualTo(r);
                }))
                .verify(STEP);
        assertThat(log).containsExactly("first");
    }

    @Test
    void smallerTokenIsRejectedAsStaleWithoutSubscribingTheWriteAndNothingChanges() {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        accepted(r, token(r, 34, "b"), log, "34");
        FencingToken zombie = token(r, 33, "a");
        AtomicBoolean subscribed = new AtomicBoolean();
        Flux<String> zombieWrite = inUnitOfWork(store().fence(r, zombie,
                Flux.just("33").doOnSubscribe(s -> subscribed.set(true))));
        StepVerifier.create(zombieWrite)
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(StaleTokenException.class, s -> {
                    assertThat(s.verdict()).isEqualTo(Verdict.REJECT_STALE);
                    assertThat(s.presented()).isSameAs(zombie);
                    assertThat(s.maxSeen()).isEqualTo(34);
                }))
                .verify(STEP);
        assertThat(subscribed).isFalse();
        // the rejection did not lower or disturb max_seen: 34's holder still writes, 33 still fails
        accepted(r, token(r, 34, "b"), log, "34 again");
        StepVerifier.create(write(r, zombie, log, "33")).expectError(StaleTokenException.class).verify(STEP);
        assertThat(log).containsExactly("34", "34 again");
    }

    @Test
    void resourcesAreIndependent() {
        String a = freshResource();
        String b = freshResource();
        List<String> log = new ArrayList<>();
        accepted(a, token(a, 100, "x"), log, "a100");
        accepted(b, token(b, 5, "y"), log, "b5");
        StepVerifier.create(write(a, token(a, 5, "y"), log, "a5")).expectError(StaleTokenException.class)
                .verify(STEP);
        assertThat(log).containsExactly("a100", "b5");
    }

    @Test
    void tokenForAnotherResourceIsRefusedAtAssembly() {
        String a = freshResource();
        String b = freshResource();
        AtomicBoolean subscribed = new AtomicBoolean();
        assertThatThrownBy(() -> store().fence(a, token(b, 1, "x"),
                Flux.just("wrong").doOnSubscribe(s -> subscribed.set(true))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(a).hasMessageContaining(b);
        assertThat(subscribed).isFalse();
    }

    /**
     * No token (what {@code FencingContext.present(..)} answers when none is bound), a {@code null} write or resource:
     * refused at assembly, naming the resource and the token, and nothing changes (the next holder's smaller first
     * token is still accepted).
     */
    @Test
    void noTokenANullWriteOrResourceIsRefusedAtAssemblyAndChangesNothing() {
        String r = freshResource();
        FencingToken five = token(r, 5, "a");
        assertThatThrownBy(() -> store().fence(r, null, Flux.just("none")))
                .isInstanceOf(MissingTokenException.class)
                .hasMessageContaining("'" + r + "'");
        assertThatThrownBy(() -> store().fence(r, five, null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("write").hasMessageContaining("'" + r + "'")
                .hasMessageContaining(five.toString());
        assertThatThrownBy(() -> store().fence(null, five, Flux.just("never")))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("resource").hasMessageContaining(five.toString());
        List<String> log = new ArrayList<>();
        accepted(r, token(r, 1, "b"), log, "1");
        assertThat(log).containsExactly("1");
    }

    @Test
    void errorFromTheWritePassesThroughUnchanged() {
        String r = freshResource();
        IllegalStateException boom = new IllegalStateException("boom");
        StepVerifier.create(inUnitOfWork(store().fence(r, token(r, 1, "a"), Flux.<String>error(boom))))
                .expectErrorSatisfies(e -> assertThat(e).isSameAs(boom))
                .verify(STEP);
    }

    @Test
    void everySignalOfTheWriteIsRelayed() {
        String r = freshResource();
        StepVerifier.create(inUnitOfWork(store().fence(r, token(r, 1, "a"), Flux.just(1, 2, 3))))
                .expectNext(1, 2, 3).expectComplete().verify(STEP);
        StepVerifier.create(inUnitOfWork(store().fence(r, token(r, 2, "a"), Flux.<Integer>empty())))
                .expectComplete().verify(STEP);
    }

    @Test
    void appliedOrderIsTokenOrderUnderConcurrentSubscriptions() {
        String r = freshResource();
        int writers = 8;
        int perWriter = 40;
        List<Long> applied = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger rejected = new AtomicInteger();
        Flux<Long> all = Flux.range(0, writers).flatMap(offset -> Flux.range(0, perWriter).concatMap(i -> {
            long value = 1 + (long) i * writers + offset; // interleaved across writers
            FencingToken tok = token(r, value, "h" + value);
            Flux<Long> write = Mono.fromCallable(() -> {
                applied.add(value);
                return value;
            }).publishOn(Schedulers.parallel()).flux(); // the write's signals arrive on another thread
            return inUnitOfWork(store().fence(r, tok, write))
                    .onErrorResume(TokenRejectedException.class, e -> {
                        assertThat(e.maxSeen()).isGreaterThan(value);
                        rejected.incrementAndGet();
                        return Flux.empty();
                    });
        }).subscribeOn(Schedulers.parallel()), writers);
        StepVerifier.create(all.then()).expectComplete().verify(Duration.ofSeconds(90));
        assertThat(applied).isNotEmpty();
        assertThat(applied).isSorted().doesNotHaveDuplicates();
        assertThat(applied.size() + rejected.get()).isEqualTo(writers * perWriter);
        assertThat(applied.get(applied.size() - 1)).isEqualTo((long) writers * perWriter);
    }
}
