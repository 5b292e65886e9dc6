package dev.fencing.testsupport;

import dev.fencing.context.MissingTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.store.FenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The behaviour every {@link FenceStore} must have, written once: each row of the rule, atomicity of check and
 * write, independence of resources. A store of your own passes it with a test class that extends this one, with
 * {@code fencing-test-support} as a test dependency:
 *
 * <pre>{@code
 * class MyFenceStoreTest extends FenceStoreContract {
 *     private final MyFenceStore store = new MyFenceStore(...);
 *
 *     @Override
 *     protected FenceStore store() {
 *         return store;
 *     }
 * }
 * }</pre>
 *
 * <p>An implementation provides {@link #store()}: the store under test, ready to fence writes (its table or
 * server set up), the same instance on every call or a fresh one over the same data. A store whose max_seen outlives
 * the instance (a table, a server) also overrides {@link #otherStore()} with a second instance over the same data, as
 * another process or this one after a restart builds it: without it, a store that keeps max_seen in the instance
 * passes. Resources are fresh per test ({@link #freshResource()}), so the store needs no cleaning between tests; a
 * store that needs the write to run inside a transaction does that in its own {@code fence} method.
 */
public abstract class FenceStoreContract {

    /** The store under test; may return the same instance every time. */
    protected abstract FenceStore store();

    /**
     * Another instance of the store over the same data, as another process (or this one after a restart) builds it:
     * it must judge against what {@link #store()} accepted. The default is {@link #store()} itself, right for a store
     * whose state lives in its instance only (the in-memory store); a durable or shared store overrides it, or the
     * contract cannot tell it from one that forgets max_seen when the instance goes.
     */
    protected FenceStore otherStore() {
        return store();
    }

    /** A resource name no other test uses. */
    protected String freshResource() {
        return "contract-" + UUID.randomUUID();
    }

    protected static FencingToken token(String resource, long value, String holder) {
        return new FencingToken(resource, value, holder);
    }

    /** Runs a write that records {@code label} into {@code log}, returning the label. */
    protected String write(String resource, FencingToken token, List<String> log, String label) throws Throwable {
        return store().fence(resource, token, () -> {
            log.add(label);
            return label;
        });
    }

    @Test
    void firstTokenForAResourceIsAccepted() throws Throwable {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        assertThat(write(r, token(r, 1, "a"), log, "w1")).isEqualTo("w1");
        assertThat(log).containsExactly("w1");
    }

    @Test
    void largerTokenIsAcceptedAndAdvances() throws Throwable {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        write(r, token(r, 33, "a"), log, "33");
        write(r, token(r, 34, "b"), log, "34");
        assertThatThrownBy(() -> write(r, token(r, 33, "a"), log, "33 again"))
                .isInstanceOf(StaleTokenException.class);
        assertThat(log).containsExactly("33", "34");
    }

    @Test
    void equalTokenFromTheSameHolderIsAccepted() throws Throwable {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        write(r, token(r, 7, "lease-1"), log, "first");
        write(r, token(r, 7, "lease-1"), log, "second");
        write(r, token(r, 7, "lease-1"), log, "third");
        assertThat(log).containsExactly("first", "second", "third");
    }

    @Test
    void equalTokenFromAnotherHolderIsRejectedAsDuplicate() throws Throwable {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        write(r, token(r, 7, "lease-1"), log, "first");
        FencingToken other = token(r, 7, "lease-2");
        assertThatThrownBy(() -> write(r, other, log, "second"))
                .isInstanceOfSatisfying(DuplicateTokenException.class, e -> {
                    assertThat(e.verdict()).isEqualTo(Verdict.REJECT_DUPLICATE);
                    assertThat(e.presented()).isSameAs(other);
                    assertThat(e.maxSeen()).isEqualTo(7);
                    assertThat(e.resource()).isEqualTo(r);
                });
        // the refusal left the holder alone: lease-1 still writes with 7, lease-2 is still a duplicate
        write(r, token(r, 7, "lease-1"), log, "first again");
        assertThatThrownBy(() -> write(r, other, log, "second again")).isInstanceOf(DuplicateTokenException.class);
        assertThat(log).containsExactly("first", "first again");
    }

    @Test
    void smallerTokenIsRejectedAsStaleAndNothingChanges() throws Throwable {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        write(r, token(r, 34, "b"), log, "34");
        FencingToken zombie = token(r, 33, "a");
        assertThatThrownBy(() -> write(r, zombie, log, "33"))
                .isInstanceOfSatisfying(StaleTokenException.class, e -> {
                    assertThat(e.verdict()).isEqualTo(Verdict.REJECT_STALE);
                    assertThat(e.presented()).isSameAs(zombie);
                    assertThat(e.maxSeen()).isEqualTo(34);
                });
        // the rejection did not lower or disturb max_seen: 34's holder still writes, 33 still fails
        write(r, token(r, 34, "b"), log, "34 again");
        assertThatThrownBy(() -> write(r, zombie, log, "33"))
                .isInstanceOf(StaleTokenException.class);
        assertThat(log).containsExactly("34", "34 again");
    }

    @Test
    void resourcesAreIndependent() throws Throwable {
        String a = freshResource();
        String b = freshResource();
        List<String> log = new ArrayList<>();
        write(a, token(a, 100, "x"), log, "a100");
        write(b, token(b, 5, "y"), log, "b5");
        assertThatThrownBy(() -> write(a, token(a, 5, "y"), log, "a5"))
                .isInstanceOf(StaleTokenException.class);
        assertThat(log).containsExactly("a100", "b5");
    }

    /**
     * Resource names are compared exactly: names that differ only in case or in leading or trailing spaces, and the
     * keyed resources of one family ({@code family:1}, {@code family:2}) and the family's own name, are resources of
     * their own (a case-insensitive or space-padding column, or a row per family, would let a smaller first token of
     * one be refused, or a stale one accepted, because of another).
     */
    @Test
    void resourcesDifferingOnlyInCaseSpacesOrKeyAreIndependent() throws Throwable {
        String base = freshResource();
        List<String> resources = List.of(base + ":Key", base + ":key", base + ":key ", " " + base + ":key",
                base + ":1", base + ":2", base);
        List<String> log = new ArrayList<>();
        for (int i = 0; i < resources.size(); i++) {
            String r = resources.get(i);
            // each later resource's first token is smaller than the one before: accepted only if its state is its own
            write(r, token(r, 100 - i, "h" + i), log, r);
        }
        assertThat(log).containsExactlyElementsOf(resources);
        for (int i = 0; i < resources.size(); i++) {
            String r = resources.get(i);
            long below = 99 - i;
            assertThatThrownBy(() -> write(r, token(r, below, "late"), log, "stale"))
                    .as("'%s' still judged against its own max_seen", r).isInstanceOf(StaleTokenException.class);
        }
        assertThat(log).containsExactlyElementsOf(resources);
    }

    /**
     * A second instance over the same data ({@link #otherStore()}: another process, a restart) judges against what
     * the first accepted, and the first against what the second accepted: max_seen lives in the data, not in an
     * instance.
     */
    @Test
    void anotherInstanceOverTheSameDataJudgesAgainstWhatThisOneAccepted() throws Throwable {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        write(r, token(r, 10, "a"), log, "10");
        FenceStore other = otherStore();
        assertThatThrownBy(() -> other.fence(r, token(r, 9, "z"), () -> "9"))
                .isInstanceOf(StaleTokenException.class);
        assertThatThrownBy(() -> other.fence(r, token(r, 10, "z"), () -> "10 z"))
                .isInstanceOf(DuplicateTokenException.class);
        assertThat(other.fence(r, token(r, 11, "b"), () -> "11")).isEqualTo("11");
        assertThatThrownBy(() -> write(r, token(r, 10, "a"), log, "10 again"))
                .isInstanceOf(StaleTokenException.class);
        assertThat(log).containsExactly("10");
    }

    @Test
    void tokenForAnotherResourceIsRefused() {
        String a = freshResource();
        String b = freshResource();
        List<String> log = new ArrayList<>();
        assertThatThrownBy(() -> write(a, token(b, 1, "x"), log, "wrong"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(a).hasMessageContaining(b);
        assertThat(log).isEmpty();
    }

    /**
     * No token (what {@code FencingContext.present(..)} answers when none is bound, passed on by code that calls the
     * store itself): refused as missing, naming the resource, with nothing written (a plain-Java user got a bare
     * {@code NullPointerException}).
     */
    @Test
    void noTokenIsRefusedAsMissingNamingTheResource() {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        assertThatThrownBy(() -> write(r, null, log, "none"))
                .isInstanceOf(MissingTokenException.class)
                .hasMessageContaining("'" + r + "'");
        assertThat(log).isEmpty();
    }

    /**
     * A {@code null} write or resource (a caller's bug) is refused before the check, naming the resource and the
     * token: max_seen is not advanced for a write that never ran, so the next holder's smaller first token is still
     * accepted.
     */
    @Test
    void aNullWriteOrResourceIsRefusedBeforeTheCheckAndChangesNothing() throws Throwable {
        String r = freshResource();
        FencingToken five = token(r, 5, "a");
        assertThatThrownBy(() -> store().fence(r, five, null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("write").hasMessageContaining("'" + r + "'")
                .hasMessageContaining(five.toString());
        assertThatThrownBy(() -> store().fence(null, five, () -> "never"))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("resource").hasMessageContaining(five.toString());
        List<String> log = new ArrayList<>();
        assertThat(write(r, token(r, 1, "b"), log, "1")).isEqualTo("1");
        assertThat(log).containsExactly("1");
    }

    @Test
    void exceptionFromTheWritePassesThroughUnchanged() {
        String r = freshResource();
        IllegalStateException boom = new IllegalStateException("boom");
        assertThatThrownBy(() -> store().fence(r, token(r, 1, "a"), () -> {
            throw boom;
        })).isSameAs(boom);
    }

    /**
     * While one write of a resource runs, no other write of it does: the check and the write are one atomic unit,
     * not a check followed by the write once the check let go. The first write waits half a second for a second one
     * to run, which a store that checks and then writes lets through at once; a correct store makes the second wait
     * (a lock, a row lock), so the first sees nothing and the second runs after it. Protected as
     * {@link #appliedOrderIsTokenOrderUnderConcurrency()} is.
     */
    @Test
    @Timeout(60)
    protected void noOtherWriteOfTheResourceRunsWhileOneIsRunning() throws Exception {
        String r = freshResource();
        CountDownLatch firstRunning = new CountDownLatch(1);
        CountDownLatch secondRan = new CountDownLatch(1);
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Boolean> first = pool.submit(() -> {
                try {
                    return store().fence(r, token(r, 1, "a"), () -> {
                        firstRunning.countDown();
                        boolean overlapped = secondRan.await(500, TimeUnit.MILLISECONDS);
                        log.add("1");
                        return overlapped;
                    });
                } catch (Throwable e) {
                    throw new AssertionError(e);
                }
            });
            assertThat(firstRunning.await(30, TimeUnit.SECONDS)).as("the first write ran").isTrue();
            Future<?> second = pool.submit(() -> {
                try {
                    return store().fence(r, token(r, 2, "b"), () -> {
                        secondRan.countDown();
                        log.add("2");
                        return null;
                    });
                } catch (Throwable e) {
                    throw new AssertionError(e);
                }
            });
            assertThat(first.get(30, TimeUnit.SECONDS)).as("the second write ran while the first was running")
                    .isFalse();
            second.get(30, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        assertThat(log).containsExactly("1", "2");
    }

    /**
     * Writes applied by concurrent holders land in token order. Protected so that a store mode which documents that
     * it does not fence effects outside its transaction (the JDBC store's check-at-commit) states what it does
     * instead.
     */
    @Test
    protected void appliedOrderIsTokenOrderUnderConcurrency() throws Exception {
        String r = freshResource();
        int threads = 8;
        int perThread = 40;
        List<Long> applied = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger rejected = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int offset = t;
                futures.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        long value = 1 + (long) i * threads + offset; // interleaved across threads
                        FencingToken tok = token(r, value, "h" + value);
                        try {
                            store().fence(r, tok, () -> {
                                applied.add(value);
                                Thread.yield();
                                return null;
                            });
                        } catch (TokenRejectedException e) {
                            assertThat(e.maxSeen()).isGreaterThan(value);
                            rejected.incrementAndGet();
                        } catch (Throwable e) {
                            throw new AssertionError(e);
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } catch (Throwable e) {
            throw new AssertionError(e);
        } finally {
            pool.shutdownNow();
        }
        assertThat(applied).isNotEmpty();
        assertThat(applied).isSorted().doesNotHaveDuplicates();
        assertThat(applied.size() + rejected.get()).isEqualTo(threads * perThread);
        assertThat(applied.get(applied.size() - 1)).isEqualTo((long) threads * perThread);
    }
}
