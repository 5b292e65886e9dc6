package dev.fencing.guard;

import dev.fencing.context.FencingContext;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.fencing.guard.Bound.bound;
import static org.assertj.core.api.Assertions.assertThat;

class FenceGuardConcurrencyTest {

    @Test
    void manyThreadsWithInterleavedTokensApplyInTokenOrder() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        FenceGuard guard = new FenceGuard(new InMemoryFenceStore());
        FencePoint repo = new FencePoint("Repo.append(long)", "log", null, null, false, new FencingMetrics(registry));
        List<Long> applied = new ArrayList<>(); // deliberately unsynchronized: the fence serializes the writes
        int threads = 6;
        int perThread = 200;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Integer>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int offset = t;
            results.add(pool.submit(() -> {
                start.await();
                int rejected = 0;
                for (int i = 0; i < perThread; i++) {
                    long value = 1 + (long) i * threads + offset;
                    try {
                        bound(new FencingToken("log", value, "h" + value),
                                () -> guard.invoke(repo, new Object[] {value}, () -> applied.add(value)));
                    } catch (TokenRejectedException e) {
                        rejected++;
                    } catch (Throwable e) {
                        throw new AssertionError(e);
                    }
                }
                return rejected;
            }));
        }
        start.countDown();
        int rejected = 0;
        for (Future<Integer> f : results) {
            rejected += f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdownNow();
        assertThat(applied).isSorted().doesNotHaveDuplicates();
        assertThat(applied.size() + rejected).isEqualTo(threads * perThread);
        assertThat(registry.get("fencing.checks").tag("outcome", "accepted").counter().count())
                .isEqualTo(applied.size());
        assertThat(registry.get("fencing.checks").tag("outcome", "stale").counter().count()).isEqualTo(rejected);
    }
}
