package dev.fencing.testsupport;

import dev.fencing.context.MissingTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.store.FenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;

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
 * <p>An implementation provides {@link #store()} only: the store under test, ready to fence writes (its table or
 * server set up), the same instance on every call or a fresh one over the same data. Resources are fresh per test
 * ({@link #freshResource()}), so the store needs no cleaning between tests; a store that needs the write to run
 * inside a transaction does that in its own {@code fence} method.
 */
public abstract class FenceStoreContract {

    /** The store under test; may return the same instance every time. */
    protected abstract FenceStore store();

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
        assertThat(log).containsExactly("first");
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
