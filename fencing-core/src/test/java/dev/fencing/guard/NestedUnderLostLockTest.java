package dev.fencing.guard;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingPropagation;
import dev.fencing.context.FencingScope;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Work nested in an acquiring call whose lock is known lost fails closed: a job under {@code orders} whose writer takes
 * a keyed lock per item ({@code order:<id>}) stops at its next item once the job's lock is lost, instead of taking
 * fresh per-item locks and overwriting what the new holder of {@code orders} wrote (a Spring Batch trial: 30 of 40
 * rows).
 * The lease is made lost by hand, so nothing here waits on a clock.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class NestedUnderLostLockTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final LosableIssuer issuer = new LosableIssuer(new InMemoryTokenIssuer());
    private final FenceGuard guard = new FenceGuard(store, issuer, Duration.ofSeconds(5));
    private final FencePoint job = new FencePoint("Job.run()", "orders", null, null, true, metrics);
    private final FencePoint item = new FencePoint("Writer.writeOne(long)", "order", args -> args[0], "#id", true,
            metrics);
    private final FencePoint row = new FencePoint("Repo.update(long)", "order", args -> args[0], "#id", false,
            metrics);
    private final List<Long> written = Collections.synchronizedList(new ArrayList<>());
    private final ExecutorService pool = Executors.newSingleThreadExecutor();

    @AfterEach
    void cleanUp() {
        pool.shutdownNow();
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    /** The writer's per-item call: acquires order:<id>, then writes the row under that token. */
    private Object writeOne(long id) throws Throwable {
        return guard.invoke(item, new Object[] {id}, () ->
                guard.invoke(row, new Object[] {id}, () -> written.add(id)));
    }

    @Test
    void aNestedAcquireUnderALostLockIsRefusedBeforeTheLockServiceIsAsked() {
        assertThatThrownBy(() -> guard.invoke(job, new Object[0], () -> {
            writeOne(1);
            issuer.lose("orders");                   // the job's lease ends while it runs (a paused process)
            writeOne(2);                              // the next item: must not take order:2
            return "COMPLETED";
        })).isInstanceOfSatisfying(StaleTokenException.class, e -> {
            assertThat(e.lockLost()).isTrue();
            assertThat(e.operation()).isEqualTo("Writer.writeOne(long)");
            assertThat(e.getMessage()).contains("Writer.writeOne(long)", "'order:2'", "'orders'",
                    "token " + issuer.first("orders").value(), "lost");
        });
        assertThat(written).containsExactly(1L);
        assertThat(issuer.asked("order:2")).as("the lock service was never asked for order:2").isZero();
        assertThat(issuer.asked("order:1")).isEqualTo(1);
        assertThat(store.maxSeen("order:2")).isEmpty();
        var failed = registry.find(FencingMetrics.ACQUISITIONS).tag("resource", "order")
                .tag("exception", "StaleTokenException").counter();
        assertThat(failed).isNotNull();
        assertThat(failed.count()).isEqualTo(1);
    }

    /** The job's loss is learnt while the item's lock is awaited: the item's lock is given back, nothing runs. */
    @Test
    void aLockTakenWhileTheEnclosingOneWasFoundLostIsGivenBackAtOnce() {
        issuer.loseWhileWaitingFor("order:10", "orders");
        assertThatThrownBy(() -> guard.invoke(job, new Object[0], () -> writeOne(10)))
                .isInstanceOfSatisfying(StaleTokenException.class, e -> {
                    assertThat(e.enclosingLock().resource()).isEqualTo("orders");
                    assertThat(e.getMessage()).contains("'order:10'", "given back at once");
                });
        assertThat(issuer.asked("order:10")).isEqualTo(1);
        assertThat(issuer.last("order:10").isReleased()).isTrue();
        assertThat(written).isEmpty();
    }

    @Test
    void aNestedAcquireUnderALockGivenBackOnAnotherThreadIsRefused() throws Throwable {
        java.util.concurrent.CountDownLatch returned = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.Future<?>[] task = new java.util.concurrent.Future<?>[1];
        guard.invoke(job, new Object[0], () -> {
            task[0] = pool.submit(FencingPropagation.callable(() -> {
                returned.await(5, TimeUnit.SECONDS);
                try {
                    return writeOne(3);
                } catch (StaleTokenException e) {
                    return e;
                } catch (Throwable t) {
                    throw new IllegalStateException(t);
                }
            }));
            return null;
        });
        returned.countDown();
        assertThat(task[0].get(5, TimeUnit.SECONDS)).isInstanceOfSatisfying(StaleTokenException.class,
                e -> assertThat(e.getMessage()).contains("'order:3'", "'orders'"));
        assertThat(issuer.asked("order:3")).isZero();
        assertThat(written).isEmpty();
    }

    /** Handed-on work that must take its own lock whatever became of its starter's hides the propagated tokens. */
    @Test
    void workThatHidesThePropagatedTokensAcquiresAfterTheStarterGaveItsLockBack() throws Throwable {
        java.util.concurrent.CountDownLatch returned = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.Future<?>[] task = new java.util.concurrent.Future<?>[1];
        guard.invoke(job, new Object[0], () -> {
            task[0] = pool.submit(FencingPropagation.callable(() -> {
                returned.await(5, TimeUnit.SECONDS);
                try (FencingScope none = FencingContext.bindOnly(List.of())) {
                    return writeOne(11);
                } catch (Throwable t) {
                    throw new IllegalStateException(t);
                }
            }));
            return null;
        });
        returned.countDown();
        assertThat(task[0].get(5, TimeUnit.SECONDS)).isEqualTo(true);
        assertThat(written).containsExactly(11L);
    }

    /** A nested acquire that took its lock while the job's was held: its checks stop once the job's lock is lost. */
    @Test
    void aCheckUnderATokenAcquiredInsideTheLostLockIsRefused() {
        assertThatThrownBy(() -> guard.invoke(job, new Object[0], () ->
                guard.invoke(item, new Object[] {4L}, () -> {
                    guard.invoke(row, new Object[] {4L}, () -> written.add(4L));
                    issuer.lose("orders");
                    // the per-item lease is healthy, the job's is not: the row's check is refused
                    return guard.invoke(row, new Object[] {4L}, () -> written.add(40L));
                }))).isInstanceOfSatisfying(StaleTokenException.class, e -> {
                    assertThat(e.lockLost()).isTrue();
                    assertThat(e.operation()).isEqualTo("Repo.update(long)");
                    assertThat(e.getMessage()).contains("'order:4'", "'orders'", "lost");
                });
        assertThat(written).containsExactly(4L);
        assertThat(store.maxSeen("order:4")).hasValue(issuer.first("order:4").value());
    }

    /** The same resource nested under its own lost lock runs under it no more either. */
    @Test
    void aNestedAcquireOfTheSameResourceUnderItsLostLockIsRefused() {
        AtomicBoolean ran = new AtomicBoolean();
        assertThatThrownBy(() -> guard.invoke(job, new Object[0], () -> {
            issuer.lose("orders");
            return guard.invoke(job, new Object[0], () -> ran.getAndSet(true));
        })).isInstanceOf(StaleTokenException.class).hasMessageContaining("'orders'");
        assertThat(ran).isFalse();
        assertThat(issuer.asked("orders")).isEqualTo(1);
    }

    @Test
    void aHealthyNestedAcquireStillWorks() throws Throwable {
        Object result = guard.invoke(job, new Object[0], () -> {
            writeOne(5);
            writeOne(6);
            return pool.submit(FencingPropagation.callable(() -> {
                try {
                    return writeOne(7);
                } catch (Throwable t) {
                    throw new IllegalStateException(t);
                }
            })).get(5, TimeUnit.SECONDS);
        });
        assertThat(result).isEqualTo(true);
        assertThat(written).containsExactly(5L, 6L, 7L);
        assertThat(issuer.asked("order:5")).isEqualTo(1);
    }

    /** A token the application bound itself is not an acquiring call's lock: nothing changes under it. */
    @Test
    void aScopeBoundByTheApplicationIsUnaffected() throws Throwable {
        try (FencingScope ignored = FencingContext.bind(new FencingToken("orders", 99, "app"))) {
            writeOne(8);
        }
        assertThat(written).containsExactly(8L);
        assertThat(issuer.asked("order:8")).isEqualTo(1);
    }

    /** Another thread that does not carry the lost binding acquires as always. */
    @Test
    void anotherThreadWithoutTheBindingIsUnaffected() throws Throwable {
        Object result = guard.invoke(job, new Object[0], () -> {
            issuer.lose("orders");
            return pool.submit(() -> {
                try {
                    return writeOne(9);
                } catch (Throwable t) {
                    throw new IllegalStateException(t);
                }
            }).get(5, TimeUnit.SECONDS);
        });
        assertThat(result).isEqualTo(true);
        assertThat(written).containsExactly(9L);
    }

    /** Wraps an issuer: counts acquisitions per resource, and makes the leases of a resource lost on demand. */
    static final class LosableIssuer implements TokenIssuer {
        private final TokenIssuer delegate;
        private final Map<String, AtomicInteger> asked = new ConcurrentHashMap<>();
        private final Map<String, AtomicBoolean> lost = new ConcurrentHashMap<>();
        private final Map<String, FencingToken> first = new ConcurrentHashMap<>();

        LosableIssuer(TokenIssuer delegate) {
            this.delegate = delegate;
        }

        /** Resources whose acquisition makes another's lease lost while it waits: the loss learnt meanwhile. */
        private final Map<String, String> losesWhileWaiting = new ConcurrentHashMap<>();
        private final Map<String, Lease> last = new ConcurrentHashMap<>();

        @Override
        public Lease acquire(String resource, Duration timeout) {
            asked.computeIfAbsent(resource, r -> new AtomicInteger()).incrementAndGet();
            String other = losesWhileWaiting.get(resource);
            if (other != null) {
                lose(other);
            }
            Lease lease = delegate.acquire(resource, timeout);
            last.put(resource, lease);
            first.putIfAbsent(resource, lease.token());
            AtomicBoolean gone = new AtomicBoolean();
            lost.put(resource, gone);
            return new Lease() {
                @Override
                public FencingToken token() {
                    return lease.token();
                }

                @Override
                public boolean isLost() {
                    return gone.get() || lease.isLost();
                }

                @Override
                public boolean isReleased() {
                    return lease.isReleased();
                }

                @Override
                public void close() {
                    lease.close();
                }
            };
        }

        void loseWhileWaitingFor(String waited, String resource) {
            losesWhileWaiting.put(waited, resource);
        }

        Lease last(String resource) {
            return last.get(resource);
        }

        void lose(String resource) {
            lost.get(resource).set(true);
        }

        int asked(String resource) {
            AtomicInteger n = asked.get(resource);
            return n == null ? 0 : n.get();
        }

        FencingToken first(String resource) {
            return first.get(resource);
        }
    }
}
