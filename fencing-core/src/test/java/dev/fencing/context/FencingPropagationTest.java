package dev.fencing.context;

import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.context.ContextRegistry;
import io.micrometer.context.ContextSnapshotFactory;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FencingPropagationTest {

    private final FencingToken accounts = new FencingToken("accounts", 34, "lease-b");
    private final FencingToken orders = new FencingToken("orders", 7, "lease-c");
    private final ExecutorService pool = Executors.newSingleThreadExecutor();

    @AfterEach
    void stop() {
        pool.shutdownNow();
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    private Map<String, FencingToken> seenOn(ExecutorService executor) throws Exception {
        return executor.submit(FencingContext::snapshot).get(10, TimeUnit.SECONDS);
    }

    /**
     * A task that binds and never closes: each wrapper closes it when the task ends and logs it at ERROR, so the pool
     * thread's next task does not write under it (a trial's leak on an executor of its own was seen by no one).
     */
    @Test
    void aScopeATaskLeftOpenIsClosedWhenItEndsAndLogged() throws Exception {
        ExecutorService wrapped = FencingPropagation.executorService(pool);
        java.util.function.Supplier<Object> leakOrders = () -> FencingContext.bind(orders);
        List<Runnable> leaks = List.of(
                () -> await(wrapped.submit(() -> FencingContext.bind(accounts))),
                () -> await(wrapped.submit((Runnable) () -> FencingContext.bind(accounts))),
                () -> await(CompletableFuture.runAsync(() -> FencingContext.bind(accounts),
                        FencingPropagation.executor(pool))),
                () -> await(pool.submit(FencingPropagation.runnable(() -> FencingContext.bind(accounts)))),
                () -> await(pool.submit(FencingPropagation.callable(() -> FencingContext.bind(accounts)))),
                () -> await(CompletableFuture.supplyAsync(FencingPropagation.supplier(leakOrders), pool)));
        for (Runnable leak : leaks) {
            FencingPropagation.logNextLeak();
            try (dev.fencing.LogCapture log = dev.fencing.LogCapture.of(FencingPropagation.class)) {
                try (FencingScope ignored = FencingContext.bind(new FencingToken("ledger", 3, "caller"))) {
                    leak.run();
                }
                assertThat(seenOn(wrapped)).as("the next task, wrapped").isEmpty();
                assertThat(seenOn(pool)).as("the next task, not wrapped").isEmpty();
                assertThat(log.records()).singleElement().satisfies(record -> {
                    assertThat(record.getLevel()).isEqualTo(java.util.logging.Level.SEVERE);
                    assertThat(record.getMessage()).contains("left fencing tokens bound on its thread")
                            .containsAnyOf(accounts.toString(), orders.toString())
                            .doesNotContain("ledger#3");
                });
            }
        }
    }

    private static void await(java.util.concurrent.Future<?> future) {
        try {
            future.get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void theAccessorIsRegisteredWithContextPropagation() {
        assertThat(ContextRegistry.getInstance().getThreadLocalAccessors())
                .anySatisfy(accessor -> assertThat(accessor.key()).isEqualTo(FencingThreadLocalAccessor.KEY));
    }

    @Test
    void withoutPropagationATokenStaysOnItsThread() throws Exception {
        try (FencingScope ignored = FencingContext.bind(accounts)) {
            assertThat(seenOn(pool)).isEmpty();
        }
    }

    @Test
    void wrappedTasksCarryEveryBoundTokenAndLeaveNothingBehind() throws Exception {
        Runnable task;
        Map<String, FencingToken>[] seen = new Map[1];
        try (FencingScope ignored = FencingContext.bind(accounts, orders)) {
            task = FencingPropagation.runnable(() -> seen[0] = FencingContext.snapshot());
        }
        pool.submit(task).get(10, TimeUnit.SECONDS);      // runs after the caller's scope closed: captured at wrap
        assertThat(seen[0]).containsEntry("accounts", accounts).containsEntry("orders", orders);
        assertThat(seenOn(pool)).isEmpty();               // the pool thread was restored: no stale token
    }

    @Test
    void wrappedCallablesCarryTheTokensToAnotherThreadAndLeaveNothingBehind() throws Exception {
        java.util.concurrent.Callable<Map<String, FencingToken>> task;
        try (FencingScope ignored = FencingContext.bind(accounts, orders)) {
            task = FencingPropagation.callable(FencingContext::snapshot);
        }
        assertThat(pool.submit(task).get(10, TimeUnit.SECONDS))
                .containsExactlyInAnyOrderEntriesOf(Map.of("accounts", accounts, "orders", orders));
        assertThat(seenOn(pool)).isEmpty();               // the pool thread keeps nothing
        assertThat(FencingContext.isEmpty()).isTrue();    // nor does the caller, whose scope closed
    }

    @Test
    void wrappedSuppliersCarryTheTokensIntoAsyncStagesAndLeaveNothingBehind() throws Exception {
        java.util.function.Supplier<FencingToken> task;
        try (FencingScope ignored = FencingContext.bind(accounts)) {
            task = FencingPropagation.supplier(() -> FencingContext.current("accounts"));
        }
        assertThat(CompletableFuture.supplyAsync(task, pool).get(10, TimeUnit.SECONDS)).isEqualTo(accounts);
        assertThat(seenOn(pool)).isEmpty();
        // a supplier that fails restores the pool thread too
        java.util.function.Supplier<Object> failing;
        try (FencingScope ignored = FencingContext.bind(orders)) {
            failing = FencingPropagation.supplier(() -> {
                throw new IllegalStateException("boom");
            });
        }
        assertThatThrownBy(() -> CompletableFuture.supplyAsync(failing, pool).get(10, TimeUnit.SECONDS))
                .hasCauseInstanceOf(IllegalStateException.class);
        assertThat(seenOn(pool)).isEmpty();
    }

    @Test
    void wrappedExecutorServiceCarriesTheSubmittersTokens() throws Exception {
        ExecutorService wrapped = FencingPropagation.executorService(pool);
        try (FencingScope ignored = FencingContext.bind(accounts)) {
            assertThat(seenOn(wrapped)).containsExactlyEntriesOf(Map.of("accounts", accounts));
        }
        assertThat(seenOn(wrapped)).isEmpty();            // submitted without a token: the task sees none
        assertThat(seenOn(pool)).isEmpty();
    }

    @Test
    void completableFutureChainsKeepTheTokenThroughEveryAsyncStage() throws Exception {
        var executor = FencingPropagation.executor(pool);
        CompletableFuture<List<FencingToken>> chain;
        try (FencingScope ignored = FencingContext.bind(accounts)) {
            chain = CompletableFuture.supplyAsync(() -> FencingContext.current("accounts"), executor)
                    .thenApplyAsync(first -> List.of(first, FencingContext.current("accounts")), executor);
        }
        assertThat(chain.get(10, TimeUnit.SECONDS)).containsExactly(accounts, accounts);
    }

    @Test
    void contextPropagationSnapshotsCarryTheTokens() throws Exception {
        Runnable task;
        FencingToken[] seen = new FencingToken[1];
        try (FencingScope ignored = FencingContext.bind(accounts)) {
            task = ContextSnapshotFactory.builder().build().captureAll()
                    .wrap((Runnable) () -> seen[0] = FencingContext.current("accounts"));
        }
        pool.submit(task).get(10, TimeUnit.SECONDS);
        assertThat(seen[0]).isEqualTo(accounts);
    }

    @Test
    void aPropagatedContextHidesWhateverThePooledThreadHadBound() throws Exception {
        FencingToken leaked = new FencingToken("accounts", 1, "leaked");
        pool.submit(() -> FencingContext.bind(leaked)).get(10, TimeUnit.SECONDS); // a buggy task leaks a scope
        Runnable withNothing = FencingPropagation.runnable(() ->
                assertThat(FencingContext.current("accounts")).isNull());
        pool.submit(withNothing).get(10, TimeUnit.SECONDS);
        Runnable withOrders;
        try (FencingScope ignored = FencingContext.bind(orders)) {
            withOrders = FencingPropagation.runnable(() ->
                    assertThat(FencingContext.snapshot()).containsOnlyKeys("orders"));
        }
        pool.submit(withOrders).get(10, TimeUnit.SECONDS);
    }

    @Test
    void aLostPropagationIsRefusedAsMissingAndCounted() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        FenceGuard guard = new FenceGuard(new InMemoryFenceStore());
        FencePoint repository = new FencePoint("Repo.save()", "accounts", null, null, false,
                new FencingMetrics(registry));
        Throwable failure;
        try (FencingScope ignored = FencingContext.bind(accounts)) {
            failure = pool.submit(() -> {
                try {
                    guard.invoke(repository, new Object[0], () -> "written");
                    return null;
                } catch (Throwable t) {
                    return t;
                }
            }).get(10, TimeUnit.SECONDS);
        }
        assertThat(failure).isInstanceOf(MissingTokenException.class);
        assertThat(registry.get("fencing.checks").tag("outcome", "missing").counter().count()).isEqualTo(1);
        assertThatThrownBy(() -> FencingContext.bindOnly(List.of(accounts, accounts)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * A stage added without *Async runs inline on the thread that completes the future, inside that thread's scope:
     * unwrapped, it sees the completing request's token; wrapped where it was created, it sees its creator's context
     * (here none: a fenced write in it would be refused as missing, not accepted under another request's token).
     */
    @Test
    void aCallbackRunInlineByTheCompletingThreadSeesItsCreatorsContextOnlyWhenWrapped() throws Exception {
        CompletableFuture<Void> trigger = new CompletableFuture<>();
        FencingToken[] unwrapped = new FencingToken[1];
        FencingToken[] wrapped = {accounts};
        trigger.thenRun(() -> unwrapped[0] = FencingContext.current("accounts"));
        trigger.thenRun(FencingPropagation.runnable(() -> wrapped[0] = FencingContext.current("accounts")));
        try (FencingScope ignored = FencingContext.bind(accounts)) {  // another request's fenced work completes it
            trigger.complete(null);
            assertThat(FencingContext.current("accounts")).as("restored after the callback").isEqualTo(accounts);
        }
        assertThat(unwrapped[0]).as("unwrapped: the completing thread's token").isEqualTo(accounts);
        assertThat(wrapped[0]).as("wrapped: its creator's context, which had none").isNull();
    }
}
