package dev.fencing.verify.lincheck;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.FencingSnapshot;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link FencingContext} scopes under concurrency, as a stress test rather than a Lincheck model check: bindings are
 * thread-confined (a thread-local stack of scopes), so threads share no state a linearizability checker could
 * interleave, and "linearizable against one sequential spec" is not the property. The property is confinement:
 * every thread, binding and closing nested scopes over the same resource names as all the others, sees exactly
 * what its own sequential model (a stack of bindings) says, and nothing is left on a thread once its outermost
 * scope closes. Also: a scope cannot be closed from another thread, and a snapshot carries a thread's tokens to
 * another thread and no further.
 */
class FencingContextStressTest {

    private static final List<String> RESOURCES = List.of("a", "b", "c");

    @Test
    void eachThreadSeesExactlyItsOwnNestedBindings() throws Exception {
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                results.add(pool.submit(() -> {
                    start.await();
                    return randomScopes(id, 20_000);
                }));
            }
            start.countDown();
            for (Future<Integer> result : results) {
                assertThat(result.get(60, TimeUnit.SECONDS)).isEqualTo(20_000);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** Random bind/close steps against a model of this thread's stack; returns the steps checked. */
    private static int randomScopes(int thread, int steps) {
        Random random = new Random(thread);
        Deque<FencingScope> scopes = new ArrayDeque<>();
        Deque<Map<String, FencingToken>> model = new ArrayDeque<>();
        for (int step = 0; step < steps; step++) {
            if (!scopes.isEmpty() && (random.nextInt(3) == 0 || scopes.size() > 6)) {
                scopes.pop().close();
                model.pop();
            } else {
                String resource = RESOURCES.get(random.nextInt(RESOURCES.size()));
                FencingToken token = new FencingToken(resource, step + 1L, "thread-" + thread);
                scopes.push(FencingContext.bind(token));
                model.push(Map.of(resource, token));
            }
            for (String resource : RESOURCES) {
                FencingToken expected = model.stream().map(m -> m.get(resource)).filter(t -> t != null)
                        .findFirst().orElse(null);
                FencingToken actual = FencingContext.current(resource);
                if (!java.util.Objects.equals(expected, actual)) {
                    throw new AssertionError("thread " + thread + " step " + step + ": current(" + resource + ") = "
                            + actual + ", its own bindings say " + expected);
                }
            }
            if (FencingContext.isEmpty() != scopes.isEmpty()) {
                throw new AssertionError("thread " + thread + " step " + step + ": isEmpty() wrong");
            }
        }
        while (!scopes.isEmpty()) {
            scopes.pop().close();
        }
        if (!FencingContext.isEmpty()) {
            throw new AssertionError("thread " + thread + ": bindings left after the outermost scope closed");
        }
        return steps;
    }

    @Test
    void aScopeIsClosedOnlyByItsOwnThread() throws Exception {
        FencingScope scope = FencingContext.bind(new FencingToken("a", 1, "main"));
        try {
            CompletableFuture<Void> other = CompletableFuture.runAsync(scope::close);
            assertThatThrownBy(other::join).hasCauseInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("must be closed on the thread that opened it");
            assertThat(FencingContext.current("a")).isNotNull();
        } finally {
            scope.close();
        }
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    @SuppressWarnings("try")
    void aSnapshotCarriesTheTokensToAnotherThreadAndNoFurther() throws Exception {
        FencingToken token = new FencingToken("a", 7, "main");
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try (FencingScope ignored = FencingContext.bind(token)) {
            FencingSnapshot snapshot = FencingContext.snapshot();
            List<Future<Map<String, Object>>> seen = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                seen.add(pool.submit(() -> {
                    Map<String, Object> views = new HashMap<>();
                    views.put("before", String.valueOf(FencingContext.current("a")));
                    try (FencingScope propagated = FencingContext.bindOnly(snapshot)) {
                        views.put("inside", FencingContext.current("a"));
                    }
                    views.put("after", String.valueOf(FencingContext.isEmpty()));
                    return views;
                }));
            }
            for (Future<Map<String, Object>> views : seen) {
                assertThat(views.get(10, TimeUnit.SECONDS)).containsEntry("before", "null")
                        .containsEntry("inside", token).containsEntry("after", "true");
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
