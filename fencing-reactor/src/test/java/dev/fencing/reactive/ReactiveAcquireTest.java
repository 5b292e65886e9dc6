package dev.fencing.reactive;

import dev.fencing.guard.FencePoint;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.IssuerMetrics;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Acquiring points: the lock is taken on subscription, off the subscribing thread for a blocking issuer, the call
 * runs under its token, and the lock is given back on complete, error and cancel, also when the subscription is
 * cancelled while the acquire is still in flight.
 */
class ReactiveAcquireTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final InMemoryReactiveFenceStore store = new InMemoryReactiveFenceStore();
    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
    private final ReactiveFenceGuard guard = ReactiveFenceGuard.builder(store)
            .issuer(ReactiveTokenIssuer.fromBlocking(issuer)).acquireTimeout(Duration.ofSeconds(5)).build();
    private final FencePoint transfer = new FencePoint("Transfers.run()", "accounts", null, null, true, metrics);
    private final FencePoint save = new FencePoint("AccountRepository.save()", "accounts", null, null, false, metrics);

    private double acquisitions(String outcome) {
        var counter = registry.find("fencing.acquisitions").tag("resource", "accounts").tag("outcome", outcome)
                .counter();
        return counter == null ? 0 : counter.count();
    }

    private void awaitReleased() {
        Polling.until(() -> !issuer.isHeld("accounts"));
    }

    @Test
    void theLockIsReleasedWhenTheCallCompletes() {
        Flux<String> fenced = guard.fence(transfer, new Object[0],
                () -> guard.fence(save, new Object[0], () -> Mono.just("saved")));

        StepVerifier.create(fenced).expectNext("saved").verifyComplete();

        awaitReleased();
        assertThat(store.maxSeen("accounts")).hasValue(issuer.highestIssued("accounts"));
        assertThat(acquisitions("acquired")).isEqualTo(1);
    }

    @Test
    void theLockIsReleasedWhenTheCallFails() {
        Flux<String> fenced = guard.fence(transfer, new Object[0],
                () -> Mono.error(new IllegalStateException("boom")));

        StepVerifier.create(fenced).expectErrorMessage("boom").verify();

        awaitReleased();
        assertThat(issuer.highestIssued("accounts")).isEqualTo(1);
    }

    @Test
    void theLockIsReleasedWhenTheSubscriberCancels() {
        CountDownLatch running = new CountDownLatch(1);
        Flux<String> fenced = guard.fence(transfer, new Object[0],
                () -> Mono.<String>never().doOnSubscribe(s -> running.countDown()));

        StepVerifier.create(fenced).then(() -> awaitLatch(running)).thenCancel().verify();

        awaitReleased();
        assertThat(acquisitions("acquired")).isEqualTo(1);
        // the lock can be taken again at once
        StepVerifier.create(guard.fence(transfer, new Object[0], () -> Mono.just("again"))).expectNext("again")
                .verifyComplete();
    }

    @Test
    void theCallSeesTheAcquiredTokenInItsContext() {
        AtomicReference<FencingToken> seen = new AtomicReference<>();
        Flux<String> fenced = guard.fence(transfer, new Object[0], () -> Mono.deferContextual(context -> {
            seen.set(ReactiveFencing.current(context, "accounts"));
            return Mono.just("ok");
        }));

        StepVerifier.create(fenced).expectNext("ok").verifyComplete();

        assertThat(seen.get()).isNotNull();
        assertThat(seen.get().value()).isEqualTo(issuer.highestIssued("accounts"));
    }

    @Test
    void anIssuerReturningATokenForAnotherResourceIsRefusedAndReleased() {
        List<Lease> leases = new CopyOnWriteArrayList<>();
        TokenIssuer wrong = (resource, timeout) -> {
            Lease lease = issuer.acquire("elsewhere", timeout);
            leases.add(lease);
            return lease;
        };
        ReactiveFenceGuard misconfigured = ReactiveFenceGuard.builder(store)
                .issuer(ReactiveTokenIssuer.fromBlocking(wrong)).build();

        StepVerifier.create(misconfigured.fence(transfer, new Object[0], () -> Mono.just("never")))
                .expectErrorSatisfies(e -> assertThat(e).hasMessageContaining("elsewhere")
                        .hasMessageContaining("Transfers.run()"))
                .verify();

        Polling.until(() -> leases.get(0).isReleased());
    }

    @Test
    void aSubscriptionCancelledWhileTheBlockingAcquireIsInFlightLeaksNoLock() throws Exception {
        CountDownLatch acquiring = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        List<Lease> leases = new CopyOnWriteArrayList<>();
        TokenIssuer slow = (resource, timeout) -> {
            acquiring.countDown();
            awaitUninterruptibly(proceed);
            Lease lease = issuer.acquire(resource, timeout);
            leases.add(lease);
            return lease;
        };
        ReactiveFenceGuard slowGuard = ReactiveFenceGuard.builder(store)
                .issuer(ReactiveTokenIssuer.fromBlocking(slow)).build();
        List<String> ran = new CopyOnWriteArrayList<>();

        Disposable subscription = slowGuard.fence(transfer, new Object[0], () -> {
            ran.add("body");
            return Mono.just("x");
        }).subscribe();
        assertThat(acquiring.await(10, TimeUnit.SECONDS)).isTrue();
        subscription.dispose();
        proceed.countDown();

        Polling.until(() -> leases.size() == 1 && leases.get(0).isReleased());
        assertThat(issuer.isHeld("accounts")).isFalse();
        assertThat(ran).isEmpty();
    }

    /**
     * A subscriber that leaves while a blocking issuer waits for a held lock interrupts the wait: the issuer counts
     * the acquire {@code cancelled}, not {@code failed} (the lock service did not fail), and the lock stays its
     * holder's.
     */
    @Test
    void aSubscriberLeavingDuringABlockingIssuersWaitIsCountedCancelledByTheIssuer() throws Exception {
        SimpleMeterRegistry issuerMeters = new SimpleMeterRegistry();
        InMemoryTokenIssuer counted = new InMemoryTokenIssuer(Duration.ofSeconds(30), 0, issuerMeters);
        CountDownLatch entered = new CountDownLatch(1);
        TokenIssuer entering = (resource, timeout) -> {
            entered.countDown();
            return counted.acquire(resource, timeout);
        };
        ReactiveFenceGuard waiting = ReactiveFenceGuard.builder(store)
                .issuer(ReactiveTokenIssuer.fromBlocking(entering)).acquireTimeout(Duration.ofSeconds(20)).build();
        Lease held = counted.acquire("accounts", Duration.ofSeconds(1));
        try {
            Disposable subscription = waiting.fence(transfer, new Object[0], () -> Mono.just("x")).subscribe();
            // the blocking acquire has started (a task the scheduler has not run yet would be dropped, never counted);
            // an interrupt that comes before its wait is counted cancelled as well
            assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
            subscription.dispose();
            Polling.until(() -> issuerMeters.find(IssuerMetrics.ACQUISITIONS).tag("outcome", "cancelled").counters()
                    .stream().mapToDouble(Counter::count).sum() == 1);
            assertThat(issuerMeters.find(IssuerMetrics.ACQUISITIONS).tag("outcome", "failed").counters()).isEmpty();
            assertThat(held.isLost()).isFalse();
        } finally {
            held.close();
        }
    }

    @Test
    void aReleaseThatFailsAfterTheCallCompletedLeavesItsValueAndAfterAFailureIsSuppressed() {
        IllegalStateException releaseFailure = new IllegalStateException("Could not release: etcd did not answer");
        List<Lease> leases = new CopyOnWriteArrayList<>();
        ReactiveFenceGuard failingRelease = ReactiveFenceGuard.builder(store)
                .issuer(ReactiveTokenIssuer.fromBlocking(failingRelease(leases, releaseFailure))).build();

        // the write is done: the subscriber gets its value and completion, not an error that says it failed
        StepVerifier.create(failingRelease.fence(transfer, new Object[0], () -> Mono.just("written")))
                .expectNext("written").verifyComplete();
        assertThat(leases).hasSize(1);
        assertThat(leases.get(0).isReleased()).isTrue();

        IllegalStateException boom = new IllegalStateException("boom");
        StepVerifier.create(failingRelease.fence(transfer, new Object[0], () -> Mono.error(boom)))
                .expectErrorSatisfies(e -> assertThat(e).isSameAs(boom)).verify();
        assertThat(boom.getSuppressed()).containsExactly(releaseFailure);
    }

    @Test
    void aReleaseThatFailsAfterACancellationIsLoggedByTheGuardNamingTheResource() {
        List<LogRecord> logged = new CopyOnWriteArrayList<>();
        Logger logger = Logger.getLogger(ReactiveFenceGuard.class.getName());
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                logged.add(record);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(handler);
        try {
            List<Lease> leases = new CopyOnWriteArrayList<>();
            ReactiveFenceGuard failingRelease = ReactiveFenceGuard.builder(store).issuer(ReactiveTokenIssuer
                    .fromBlocking(failingRelease(leases, new IllegalStateException("etcd did not answer")))).build();
            CountDownLatch running = new CountDownLatch(1);

            StepVerifier.create(failingRelease.fence(transfer, new Object[0],
                    () -> Mono.<String>never().doOnSubscribe(s -> running.countDown())))
                    .then(() -> awaitLatch(running)).thenCancel().verify();

            // Reactor would log its own "Async resource cleanup failed", naming no lock; the guard names it
            Polling.until(() -> !logged.isEmpty());
            assertThat(logged).singleElement().satisfies(record -> {
                assertThat(record.getLevel()).isEqualTo(Level.WARNING);
                assertThat(record.getMessage()).contains("'accounts'", "was cancelled", "etcd did not answer");
            });
        } finally {
            logger.removeHandler(handler);
        }
    }

    /** The in-memory issuer, whose leases release their lock and then report that they could not. */
    private TokenIssuer failingRelease(List<Lease> leases, RuntimeException failure) {
        return (resource, timeout) -> {
            Lease lease = issuer.acquire(resource, timeout);
            leases.add(lease);
            return new Lease() {
                @Override
                public FencingToken token() {
                    return lease.token();
                }

                @Override
                public boolean isLost() {
                    return lease.isLost();
                }

                @Override
                public boolean isReleased() {
                    return lease.isReleased();
                }

                @Override
                public void close() {
                    lease.close();
                    throw failure;
                }
            };
        };
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** A lock service that grants the lock whatever happens to the waiting thread: the interrupt is swallowed. */
    private static void awaitUninterruptibly(CountDownLatch latch) {
        while (true) {
            try {
                latch.await();
                return;
            } catch (InterruptedException e) {
                // keep waiting, and do not pass the interrupt on to the issuer
            }
        }
    }
}
