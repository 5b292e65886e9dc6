package dev.fencing.guard;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.FencingSnapshot;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Acquiring calls nested under a lock already held, and a re-entrant issuer that hands a nested acquire the same
 * token: the lock is judged once, naming every acquiring call that ran under it, and an equal token's second use
 * never unregisters the first.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class NestedUncheckedLeaseTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
    private final FenceGuard guard = new FenceGuard(store, issuer, Duration.ofSeconds(5));
    private final FencePoint repository = new FencePoint("Repo.append()", "ledger", null, null, false, metrics);

    private double unchecked() {
        var counter = registry.find(FencingMetrics.UNCHECKED_LEASES).tag("resource", "ledger").counter();
        return counter == null ? 0 : counter.count();
    }

    /**
     * An acquiring method that opted out (it reads, then calls a writer) calls one that did not: the inner one runs
     * under the outer's lock and writes around the fence, so the lock is reported for it.
     */
    @Test
    void aCheckedNestedCallMarksTheOuterLock() throws Throwable {
        FencePoint outer = new FencePoint("Service.outer()", "ledger", null, null, true, metrics);
        FencePoint inner = new FencePoint("Service.inner()", "ledger", null, null, true, metrics);
        guard.invoke(outer, new Object[0], () -> guard.invoke(inner, new Object[0],
                () -> guard.invoke(repository, new Object[0], () -> "fenced write")));
        assertThat(unchecked()).isZero();
        assertThat(issuer.highestIssued("ledger")).as("one lock, propagated").isEqualTo(1);
    }

    @Test
    void nestedAcquiringCallThatWritesUncheckedUnderAnOptedOutCallerIsReported() throws Throwable {
        FencePoint audit = new FencePoint("Service.audit()", "ledger", null, null, true, false, metrics);
        FencePoint transfer = new FencePoint("Service.transfer()", "ledger", null, null, true, metrics);

        guard.invoke(audit, new Object[0], () -> guard.invoke(transfer, new Object[0], () -> "unfenced write"));
        assertThat(unchecked()).as("transfer() wrote unchecked under audit()'s lock").isEqualTo(1);
    }

    /** Without the opt-out: the report names the nested method too, and counts the lock once. */
    @Test
    void nestedAcquiringCallIsNamedInTheReport() throws Throwable {
        FencePoint outer = new FencePoint("Service.outer()", "ledger", null, null, true, metrics);
        FencePoint inner = new FencePoint("Service.inner()", "ledger", null, null, true, metrics);
        dev.fencing.LogCapture log = dev.fencing.LogCapture.of(UncheckedLeases.class);
        try {
            guard.invoke(outer, new Object[0], () -> guard.invoke(inner, new Object[0], () -> "unfenced write"));
            assertThat(log.records()).hasSize(1);
            // in the order they returned
            assertThat(log.records().get(0).getMessage()).contains("Service.inner(), Service.outer()");
            assertThat(unchecked()).isEqualTo(1);
        } finally {
            log.close();
        }
    }

    /**
     * Equal tokens opened twice (a re-entrant issuer, as Hazelcast's FencedLock, returns the same token to a
     * same-thread re-acquire, here one whose outer binding was hidden): closing the inner use must not unregister the
     * outer lock's, or a plain-bind hand-off of the outer token would no longer count and the lock be reported.
     */
    @Test
    void equalTokensOpenedTwiceInnerCloseDoesNotUnregisterTheOuterLock() throws Throwable {
        ReentrantIssuer reentrant = new ReentrantIssuer();
        FenceGuard g = new FenceGuard(store, reentrant, Duration.ofSeconds(5));
        FencePoint outer = new FencePoint("Service.outer()", "ledger", null, null, true, metrics);
        FencePoint inner = new FencePoint("Service.inner()", "ledger", null, null, true, false, metrics);

        g.invoke(outer, new Object[0], () -> {
            FencingToken mine = FencingContext.current("ledger");
            // e.g. a FencingPropagation-wrapped task captured on a thread with no tokens, run by CallerRunsPolicy
            try (FencingScope isolated = FencingContext.bindOnly(FencingSnapshot.empty())) {
                g.invoke(inner, new Object[0], () -> "reads");
            }
            // the outer lock's token handed to another thread by a plain bind, where the repository checks it
            Throwable[] failure = new Throwable[1];
            Thread worker = new Thread(() -> {
                try (FencingScope ignored = FencingContext.bind(mine)) {
                    guard.invoke(repository, new Object[0], () -> "written");
                } catch (Throwable t) {
                    failure[0] = t;
                }
            });
            worker.start();
            worker.join();
            assertThat(failure[0]).isNull();
            return null;
        });
        assertThat(reentrant.acquires.get()).isEqualTo(2);
        assertThat(unchecked()).as("the outer lock's token WAS checked (on the worker)").isZero();
    }

    /** Hazelcast-like: a same-thread re-acquire of a held lock returns a new lease with the same token. */
    private static final class ReentrantIssuer implements dev.fencing.issuer.TokenIssuer {
        final AtomicInteger acquires = new AtomicInteger();
        private FencingToken held;
        private int count;

        @Override
        public synchronized Lease acquire(String resource, Duration timeout) {
            acquires.incrementAndGet();
            if (held == null) {
                held = new FencingToken(resource, 7, "member/1@7");
            }
            count++;
            FencingToken token = held;
            return new Lease() {
                boolean released;

                @Override
                public FencingToken token() {
                    return token;
                }

                @Override
                public boolean isLost() {
                    return false;
                }

                @Override
                public boolean isReleased() {
                    return released;
                }

                @Override
                public void close() {
                    synchronized (ReentrantIssuer.this) {
                        if (!released) {
                            released = true;
                            if (--count == 0) {
                                held = null;
                            }
                        }
                    }
                }
            };
        }
    }
}
