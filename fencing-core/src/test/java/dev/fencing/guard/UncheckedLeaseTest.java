package dev.fencing.guard;

import dev.fencing.LogCapture;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingPropagation;
import dev.fencing.context.FencingScope;
import dev.fencing.context.FencingSnapshot;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.logging.Level;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An acquiring call whose token no check presented (and no carrier sent) is counted in {@code fencing.leases.unchecked}
 * and logged once per method: the pitfall "a resource that does not check" made loud. Whatever presents the token
 * while the lock is held counts: a check on this thread or another, a carrier, a later acquiring call of the same
 * unit of work.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class UncheckedLeaseTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
    private final FenceGuard guard = new FenceGuard(store, issuer, Duration.ofSeconds(5));
    private final FencePoint service = new FencePoint("Service.transfer()", "ledger", null, null, true, metrics);
    private final FencePoint repository = new FencePoint("Repo.append()", "ledger", null, null, false, metrics);
    private final LogCapture log = LogCapture.of(UncheckedLeases.class);

    @AfterEach
    void cleanUp() {
        log.close();
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    private double unchecked() {
        var counter = registry.find(FencingMetrics.UNCHECKED_LEASES).tag("resource", "ledger").counter();
        return counter == null ? -1 : counter.count();
    }

    private void write() throws Exception {
        try {
            guard.invoke(repository, new Object[0], () -> "written");
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    @Test
    void aCallWhoseTokenNoCheckPresentedIsCountedEveryTimeAndLoggedOnce() throws Throwable {
        assertThat(guard.invoke(service, new Object[0], () -> "unfenced write")).isEqualTo("unfenced write");
        guard.invoke(service, new Object[0], () -> "again");

        assertThat(unchecked()).isEqualTo(2);
        assertThat(log.records()).hasSize(1);
        assertThat(log.records().get(0).getLevel()).isEqualTo(Level.WARNING);
        assertThat(log.records().get(0).getMessage())
                .contains("Service.transfer()", "'ledger'", "@Fenced(resource = \"ledger\")",
                        "fencing.leases.unchecked", "reportUnchecked = false");
    }

    @Test
    void aCheckUnderTheLockCounts() throws Throwable {
        guard.invoke(service, new Object[0], () -> {
            write();
            return null;
        });
        assertThat(unchecked()).isZero();
        assertThat(log.records()).isEmpty();
    }

    @Test
    void aCheckThatRejectsTheTokenStillPresentedIt() throws Throwable {
        store.raiseFloor("ledger", 1_000);
        guard.invoke(service, new Object[0], () -> {
            assertThatThrownBy(this::write).isInstanceOf(StaleTokenException.class);
            return null; // the caller handles the refusal and returns: its write was refused, not unchecked
        });
        assertThat(unchecked()).isZero();
    }

    @Test
    void aCallThatFailsIsNotReported() {
        IllegalStateException boom = new IllegalStateException("before any write");
        assertThatThrownBy(() -> guard.invoke(service, new Object[0], () -> {
            throw boom;
        })).isSameAs(boom);
        assertThat(unchecked()).isZero();
        assertThat(log.records()).isEmpty();
    }

    @Test
    void aCheckOnAnotherThreadCountsWhenTheTokenIsPropagated() throws Throwable {
        ExecutorService pool = FencingPropagation.executorService(Executors.newSingleThreadExecutor());
        try {
            guard.invoke(service, new Object[0], () -> pool.submit(() -> {
                write();
                return null;
            }).get(10, TimeUnit.SECONDS));
        } finally {
            pool.shutdownNow();
        }
        assertThat(unchecked()).isZero();
    }

    /** Writes through the repository on a new thread under the binding {@code bind} opens there, and waits. */
    private static void writeOnAnotherThread(Supplier<FencingScope> bind, Callable<?> write) throws Exception {
        List<Throwable> failures = new ArrayList<>();
        Thread worker = new Thread(() -> {
            try (FencingScope ignored = bind.get()) {
                write.call();
            } catch (Throwable t) {
                failures.add(t);
            }
        });
        worker.start();
        worker.join(10_000);
        assertThat(failures).isEmpty();
    }

    @Test
    void aSnapshotBoundElsewhereCarriesTheUse() throws Throwable {
        guard.invoke(service, new Object[0], () -> {
            FencingSnapshot snapshot = FencingContext.snapshot();
            writeOnAnotherThread(() -> FencingContext.bindOnly(snapshot.values()), () -> {
                write();
                return null;
            });
            return null;
        });
        assertThat(unchecked()).isZero();
    }

    @Test
    void aTokenHandedToAnotherThreadByAPlainBindStillCountsForItsLock() throws Throwable {
        FencingToken[] handed = new FencingToken[1];
        guard.invoke(service, new Object[0], () -> {
            handed[0] = FencingContext.snapshot().get("ledger"); // what MissingTokenException's message suggests
            writeOnAnotherThread(() -> FencingContext.bind(handed[0]), () -> {
                write();
                return null;
            });
            return null;
        });
        assertThat(unchecked()).isZero();

        // once the lock is given back, binding its token finds no use: nothing marks a lock already judged
        try (FencingScope ignored = FencingContext.bind(handed[0])) {
            assertThat(FencingContext.snapshot().useOf("ledger")).isNull();
        }
    }

    @Test
    void aMethodThatMayReturnWithoutACheckOptsOut() throws Throwable {
        FencePoint readsOnly = new FencePoint("Service.audit()", "ledger", null, null, true, false, metrics);
        guard.invoke(readsOnly, new Object[0], () -> "read under the lock");
        assertThat(unchecked()).isZero();
        assertThat(log.records()).isEmpty();

        assertThatThrownBy(() -> new FencePoint("Repo.append()", "ledger", null, null, false, false, metrics))
                .isInstanceOf(dev.fencing.FencingConfigurationException.class)
                .hasMessageContaining("Repo.append()").hasMessageContaining("acquiring methods only");
    }

    @Test
    void aCarrierThatSentTheTokenCounts() throws Throwable {
        guard.invoke(service, new Object[0], () -> {
            FencingSnapshot snapshot = FencingContext.snapshot();
            snapshot.markSent(snapshot.values()); // what fencing-web's and fencing-amqp's carriers do
            return null;
        });
        assertThat(unchecked()).isZero();
    }

    @Test
    void sendingAnotherTokenOfTheSameResourceDoesNotCount() throws Throwable {
        guard.invoke(service, new Object[0], () -> {
            FencingContext.snapshot().markSent(List.of(new FencingToken("ledger", 99, "someone-else")));
            return null;
        });
        assertThat(unchecked()).isEqualTo(1);
    }

    @Test
    void aNestedAcquiringCallPropagatesTheLockAndItsCheckCounts() throws Throwable {
        guard.invoke(service, new Object[0], () -> guard.invoke(service, new Object[0], () -> {
            write();
            return null;
        }));
        assertThat(unchecked()).isZero();
    }

    @Test
    void readingTheBindingWithoutPresentingItDoesNotCount() throws Throwable {
        guard.invoke(service, new Object[0], () -> {
            FencingSnapshot snapshot = FencingContext.snapshot();
            assertThat(snapshot.get("ledger")).isNotNull();
            assertThat(snapshot.useOf("ledger")).isNotNull();
            assertThat(FencingContext.currentLocal("ledger")).isNotNull();
            assertThat(FencingContext.current("ledger")).isNotNull(); // for a log line: a read, not a check
            return null;
        });
        assertThat(unchecked()).isEqualTo(1);
    }

    @Test
    void aLockHeldUntilTheUnitOfWorkEndsIsJudgedAtItsReleaseWithEveryCallThatReusedIt() throws Throwable {
        UnitOfWork unit = new UnitOfWork();
        FenceGuard transactional = FenceGuard.builder(store).issuer(issuer).leaseScope(unit).build();

        transactional.invoke(service, new Object[0], () -> "reads only");
        assertThat(unchecked()).isZero(); // not released yet: a later call of this unit may still check
        transactional.invoke(service, new Object[0], () -> {
            write();
            return null;
        });
        unit.end();
        assertThat(unchecked()).isZero();

        transactional.invoke(service, new Object[0], () -> "reads only");
        transactional.invoke(service, new Object[0], () -> "reads only again");
        assertThat(unchecked()).isZero();
        unit.end();
        assertThat(unchecked()).isEqualTo(1); // one lock, one report
    }

    @Test
    void aLockHeldAcrossAcquiringCallsNamesEachMethodThatRanUnderItAndLeavesOutThoseThatOptedOut() throws Throwable {
        UnitOfWork unit = new UnitOfWork();
        FenceGuard transactional = FenceGuard.builder(store).issuer(issuer).leaseScope(unit).build();
        FencePoint conditional = new FencePoint("Service.maybeWrite(boolean)", "ledger", null, null, true, metrics);
        FencePoint readsOnly = new FencePoint("Service.audit()", "ledger", null, null, true, false, metrics);

        transactional.invoke(conditional, new Object[0], () -> "decided not to write");
        transactional.invoke(service, new Object[0], () -> "wrote around the fence");
        unit.end();
        assertThat(unchecked()).isEqualTo(1);
        assertThat(log.records()).hasSize(1);
        assertThat(log.records().get(0).getMessage())
                .contains("on Service.maybeWrite(boolean), Service.transfer() held the lock on 'ledger'");

        transactional.invoke(readsOnly, new Object[0], () -> "read");
        transactional.invoke(service, new Object[0], () -> "wrote around the fence again");
        unit.end();
        assertThat(unchecked()).isEqualTo(2);
        assertThat(log.records()).hasSize(1); // both methods were logged already

        transactional.invoke(readsOnly, new Object[0], () -> "read only");
        unit.end();
        assertThat(unchecked()).isEqualTo(2);
    }

    /** Holds each lease until {@link #end()}, handing it to later acquiring calls: a transaction's lease scope. */
    private static final class UnitOfWork implements LeaseScope {
        private final Map<String, Lease> held = new LinkedHashMap<>();

        @Override
        public Lease held(String resource) {
            return held.get(resource);
        }

        @Override
        public void release(Lease lease) {
            held.putIfAbsent(lease.token().resource(), lease);
        }

        void end() {
            held.values().forEach(Lease::close);
            held.clear();
        }
    }
}
