package dev.fencing.context;

import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.guard.RemoteTokenSetAsideException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.context.ContextSnapshotFactory;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Tokens bound from a remote carrier (a request header) are presented to checks, but never stand in for a lock, and
 * an acquiring point never sets them aside with a lock of its own (a stale caller's write would land): it refuses,
 * on the thread that received them and on every thread they are propagated to.
 */
class RemoteBindingTest {

    private static final String RESOURCE = "accounts:3";
    private final FencingToken forged = new FencingToken(RESOURCE, 1_000_000, "evil");

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
    private final FenceGuard guard = new FenceGuard(store, issuer, FenceGuard.DEFAULT_ACQUIRE_TIMEOUT);
    private final FencePoint service = new FencePoint("Service.transfer()", RESOURCE, null, null, true, metrics);
    private final FencePoint repository = new FencePoint("Repo.write()", RESOURCE, null, null, false, metrics);
    private final ExecutorService pool = Executors.newSingleThreadExecutor();

    @AfterEach
    void nothingLeaks() {
        pool.shutdownNow();
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    private double acquired() {
        var c = registry.find("fencing.acquisitions").tag("outcome", "acquired").counter();
        return c == null ? 0 : c.count();
    }

    /** A service method that acquires, calling a repository that checks; returns the token the check presented. */
    private FencingToken transfer() throws Throwable {
        return guard.invoke(service, new Object[0],
                () -> guard.invoke(repository, new Object[0], () -> FencingContext.current(RESOURCE)));
    }

    private Callable<FencingToken> transferTask() {
        return () -> {
            try {
                return transfer();
            } catch (Exception | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        };
    }

    private void assertRefusedWithoutALock(Throwable refusal, double acquiredBefore) {
        assertThat(refusal).isInstanceOfSatisfying(RemoteTokenSetAsideException.class, e -> {
            assertThat(e.resource()).isEqualTo(RESOURCE);
            assertThat(e.presentedValue()).isEqualTo(forged.value());
            assertThat(e.getMessage()).contains("Service.transfer()").contains("remove acquire = true");
        });
        assertThat(acquired()).as("no lock was taken").isEqualTo(acquiredBefore);
        assertThat(store.maxSeen(RESOURCE)).as("nothing reached the store").isEmpty();
        assertThat(issuer.acquire(RESOURCE, java.time.Duration.ZERO).token().value())
                .as("the lock is free").isPositive();
    }

    @Test
    void remoteBindingsAreCheckedButAreNotLocal() {
        FencingToken local = new FencingToken(RESOURCE, 5, "lease");
        try (FencingScope ignored = FencingContext.bindRemote(List.of(forged))) {
            assertThat(FencingContext.current(RESOURCE)).isEqualTo(forged);
            assertThat(FencingContext.currentLocal(RESOURCE)).isNull();
            assertThat(FencingContext.snapshot().isRemote(RESOURCE)).isTrue();
            try (FencingScope inner = FencingContext.bind(local)) {
                assertThat(FencingContext.current(RESOURCE)).isEqualTo(local);
                assertThat(FencingContext.currentLocal(RESOURCE)).isEqualTo(local);
                assertThat(FencingContext.snapshot().isRemote(RESOURCE)).isFalse();
            }
            assertThat(FencingContext.currentLocal(RESOURCE)).isNull();
        }
        try (FencingScope outer = FencingContext.bind(local);
             FencingScope remote = FencingContext.bindRemote(List.of())) {
            // a remote binding is exact: what the thread had bound before is hidden, for checks and for acquiring
            assertThat(FencingContext.current(RESOURCE)).isNull();
            assertThat(FencingContext.currentLocal(RESOURCE)).isNull();
        }
        assertThatThrownBy(() -> FencingContext.bindRemote(List.of(forged, forged)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * Scopes of up to eight tokens share their origin flags (a bind allocates none): every count, bound locally,
     * remotely and from a snapshot that mixes both, and bound again in turn, keeps each token's own origin.
     */
    @Test
    void everyScopeKeepsItsTokensOriginsWhateverWasBoundBefore() {
        for (int round = 0; round < 2; round++) {
            for (int n = 0; n <= 10; n++) {
                List<FencingToken> tokens = new java.util.ArrayList<>();
                for (int i = 0; i < n; i++) {
                    tokens.add(new FencingToken("origin:" + i, i + 1, "lease"));
                }
                try (FencingScope remote = FencingContext.bindRemote(tokens)) {
                    for (FencingToken token : tokens) {
                        assertThat(FencingContext.currentLocal(token.resource())).as("remote, %d tokens", tokens.size())
                                .isNull();
                    }
                }
                try (FencingScope local = FencingContext.bind(tokens.toArray(FencingToken[]::new))) {
                    for (FencingToken token : tokens) {
                        assertThat(FencingContext.currentLocal(token.resource())).as("local, %d tokens", tokens.size())
                                .isSameAs(token);
                    }
                }
                if (n < 2) {
                    continue;
                }
                // the first remote, the others local, captured and bound again as they were
                FencingSnapshot mixed;
                try (FencingScope remote = FencingContext.bindRemote(tokens.subList(0, 1));
                     FencingScope local = FencingContext.bind(tokens.subList(1, n).toArray(FencingToken[]::new))) {
                    mixed = FencingContext.snapshot();
                }
                try (FencingScope again = FencingContext.bindOnly(mixed)) {
                    assertThat(FencingContext.currentLocal("origin:0")).as("remote in a mixed snapshot").isNull();
                    for (int i = 1; i < n; i++) {
                        assertThat(FencingContext.currentLocal("origin:" + i)).as("local in a mixed snapshot, %d", i)
                                .isSameAs(tokens.get(i));
                    }
                }
                // the other way round: all but the last remote, bound again from the snapshot and from its values
                FencingSnapshot mostlyRemote;
                try (FencingScope remote = FencingContext.bindRemote(tokens.subList(0, n - 1));
                     FencingScope local = FencingContext.bind(tokens.get(n - 1))) {
                    mostlyRemote = FencingContext.snapshot();
                }
                try (FencingScope again = FencingContext.bindOnly(mostlyRemote.values())) {
                    for (int i = 0; i < n - 1; i++) {
                        assertThat(FencingContext.currentLocal("origin:" + i)).as("remote, mostly remote, %d", i)
                                .isNull();
                    }
                    assertThat(FencingContext.currentLocal("origin:" + (n - 1))).as("local, mostly remote")
                            .isSameAs(tokens.get(n - 1));
                }
                try (FencingScope again = FencingContext.bindOnly(FencingSnapshot.remote(tokens))) {
                    for (FencingToken token : tokens) {
                        assertThat(FencingContext.currentLocal(token.resource())).as("a remote snapshot, %d tokens", n)
                                .isNull();
                    }
                }
            }
        }
    }

    @Test
    void anAcquiringMethodRefusesToSetAHeaderTokenAside() throws Throwable {
        double before = acquired();
        Throwable refusal;
        try (FencingScope ignored = FencingContext.bindRemote(List.of(forged))) {
            refusal = org.assertj.core.api.Assertions.catchThrowable(this::transfer);
            assertThat(FencingContext.current(RESOURCE)).as("the remote binding is still there").isEqualTo(forged);
        }
        assertRefusedWithoutALock(refusal, before);
    }

    @Test
    void aHeaderTokenForAnotherResourceDoesNotStopAnAcquiringMethod() throws Throwable {
        try (FencingScope ignored = FencingContext.bindRemote(List.of(new FencingToken("other", 9, "caller")))) {
            FencingToken presented = transfer();
            assertThat(presented.resource()).isEqualTo(RESOURCE);
            assertThat(store.maxSeen(RESOURCE)).hasValue(presented.value());
        }
    }

    @Test
    void aLocalTokenIsStillPropagatedWithoutASecondLock() throws Throwable {
        FencingToken held = issuer.acquire(RESOURCE, FenceGuard.DEFAULT_ACQUIRE_TIMEOUT).token();
        double before = acquired();
        try (FencingScope ignored = FencingContext.bind(held)) {
            assertThat(transfer()).isEqualTo(held);
        }
        assertThat(acquired()).isEqualTo(before);
    }

    /** Every way the library carries a context to another thread; each is started while the header token is bound. */
    private CompletableFuture<FencingToken> carry(String carrier, Callable<FencingToken> task) throws Exception {
        return switch (carrier) {
            case "runnable" -> {
                CompletableFuture<FencingToken> result = new CompletableFuture<>();
                Runnable wrapped = FencingPropagation.runnable(() -> {
                    try {
                        result.complete(task.call());
                    } catch (Exception e) {
                        result.completeExceptionally(e);
                    }
                });
                pool.execute(wrapped);
                yield result;
            }
            case "callable" -> CompletableFuture.completedFuture(
                    pool.submit(FencingPropagation.callable(task)).get(10, TimeUnit.SECONDS));
            case "supplier" -> CompletableFuture.supplyAsync(FencingPropagation.supplier(() -> call(task)), pool);
            case "executor" -> CompletableFuture.supplyAsync(() -> call(task), FencingPropagation.executor(pool));
            case "executorService" -> CompletableFuture.completedFuture(
                    FencingPropagation.executorService(pool).submit(task).get(10, TimeUnit.SECONDS));
            case "contextSnapshot" -> CompletableFuture.completedFuture(pool.submit(
                    ContextSnapshotFactory.builder().build().captureAll().wrap(task)).get(10, TimeUnit.SECONDS));
            case "snapshotAndBindOnly" -> {
                FencingSnapshot captured = FencingContext.snapshot();
                yield CompletableFuture.supplyAsync(() -> {
                    try (FencingScope ignored = FencingContext.bindOnly(captured)) {
                        return call(task);
                    }
                }, pool);
            }
            case "snapshotValuesAndBindOnly" -> {
                var captured = FencingContext.snapshot().values();
                yield CompletableFuture.supplyAsync(() -> {
                    try (FencingScope ignored = FencingContext.bindOnly(captured)) {
                        return call(task);
                    }
                }, pool);
            }
            default -> throw new IllegalArgumentException(carrier);
        };
    }

    private static <T> T call(Callable<T> task) {
        try {
            return task.call();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"runnable", "callable", "supplier", "executor", "executorService", "contextSnapshot",
            "snapshotAndBindOnly", "snapshotValuesAndBindOnly"})
    void aPropagatedHeaderTokenIsNeverSetAsideByAnAcquiringMethod(String carrier) throws Exception {
        double before = acquired();
        CompletableFuture<FencingToken> onThePool;
        CompletableFuture<Boolean> stillRemoteThere;
        try (FencingScope ignored = FencingContext.bindRemote(List.of(forged))) {
            stillRemoteThere = carry(carrier, () -> new FencingToken(RESOURCE,
                    FencingContext.current(RESOURCE) == forged && FencingContext.currentLocal(RESOURCE) == null ? 1 : 2,
                    "probe")).thenApply(t -> t.value() == 1);
            CompletableFuture<FencingToken> carried;
            try {
                carried = carry(carrier, transferTask());
            } catch (java.util.concurrent.ExecutionException e) { // the carriers that wait for the task themselves
                carried = CompletableFuture.failedFuture(e);
            }
            onThePool = carried;
        }
        assertThat(stillRemoteThere.get(10, TimeUnit.SECONDS)).as("propagated, and still remote").isTrue();
        Throwable refusal = org.assertj.core.api.Assertions.catchThrowable(() -> onThePool.get(10, TimeUnit.SECONDS));
        while (refusal instanceof java.util.concurrent.ExecutionException
                || refusal instanceof java.util.concurrent.CompletionException
                || (refusal instanceof IllegalStateException && refusal.getCause() != null)) {
            refusal = refusal.getCause();
        }
        assertRefusedWithoutALock(refusal, before);
        assertThat(pool.submit(() -> FencingContext.isEmpty()).get(10, TimeUnit.SECONDS)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"runnable", "executorService", "contextSnapshot", "snapshotAndBindOnly"})
    void aPropagatedLocalTokenStaysLocal(String carrier) throws Exception {
        FencingToken held = issuer.acquire(RESOURCE, FenceGuard.DEFAULT_ACQUIRE_TIMEOUT).token();
        double before = acquired();
        CompletableFuture<FencingToken> onThePool;
        try (FencingScope ignored = FencingContext.bind(held)) {
            onThePool = carry(carrier, transferTask());
        }
        assertThat(onThePool.get(10, TimeUnit.SECONDS)).isEqualTo(held);
        assertThat(acquired()).isEqualTo(before);
    }
}
