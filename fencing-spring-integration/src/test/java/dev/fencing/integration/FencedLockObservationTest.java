package dev.fencing.integration;

import dev.fencing.context.FencingContext;
import dev.fencing.guard.FenceGuard;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The blocking waits of a registry's locks are observed as an acquiring method's wait is ({@code fencing.acquire},
 * tagged with the resource's family and the outcome), current while the lock service works and ended before the
 * holder's work; {@code tryLock}, a poll, is not observed.
 */
@Timeout(20)
class FencedLockObservationTest {

    private final MeterRegistry meters = new SimpleMeterRegistry();
    private final ObservationRegistry observations = ObservationRegistry.create();
    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
    private final AtomicReference<Observation> duringAcquire = new AtomicReference<>();
    private final TokenIssuer watched = (resource, timeout) -> {
        duringAcquire.set(observations.getCurrentObservation());
        return issuer.acquire(resource, timeout);
    };
    private final FencedLockRegistry registry = new FencedLockRegistry(watched, "orders:", FencingMetrics.noop())
            .observations(observations);

    FencedLockObservationTest() {
        observations.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
    }

    @AfterEach
    void nothingLeftBound() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    private long timed(String resource, String outcome) {
        Timer timer = meters.find(FenceGuard.ACQUIRE_OBSERVATION).tag("resource", resource).tag("outcome", outcome)
                .timer();
        return timer == null ? 0 : timer.count();
    }

    @Test
    void aLockIsObservedUnderItsFamilyWhileTheLockServiceWorksAndNotDuringTheHolding() throws Exception {
        FencedLock lock = registry.obtain("42");
        lock.lock();
        try {
            assertThat(observations.getCurrentObservation()).as("ended before the holder's work").isNull();
        } finally {
            lock.unlock();
        }
        lock.lockInterruptibly();
        lock.unlock();

        assertThat(duringAcquire.get()).as("current while the issuer works").isNotNull();
        assertThat(duringAcquire.get().getContext().getLowCardinalityKeyValue("resource").getValue())
                .isEqualTo("orders");
        assertThat(duringAcquire.get().getContext().getHighCardinalityKeyValue("fencing.resource").getValue())
                .isEqualTo("orders:42");
        assertThat(duringAcquire.get().getContext().getHighCardinalityKeyValue("fencing.method").getValue())
                .isEqualTo("FencedLock.lockInterruptibly()");
        assertThat(timed("orders", "acquired")).isEqualTo(2);
        assertThat(meters.find(FenceGuard.ACQUIRE_OBSERVATION).tag("resource", "orders:42").timer())
                .as("no key in a tag").isNull();
    }

    @Test
    void aReentrantLockAndATryLockAreNotObserved() throws Exception {
        FencedLock lock = registry.obtain("7");
        assertThat(lock.tryLock()).isTrue();
        try {
            lock.lock(); // reentrant: no wait
            lock.unlock();
        } finally {
            lock.unlock();
        }
        assertThat(lock.tryLock(1, TimeUnit.SECONDS)).isTrue();
        lock.unlock();
        assertThat(meters.find(FenceGuard.ACQUIRE_OBSERVATION).timers()).isEmpty();
        assertThat(duringAcquire.get()).isNull();
    }

    @Test
    void aWaitInterruptedIsCancelledAndABrokenLockServiceFailed() throws Exception {
        FencedLock lock = registry.obtain("9");
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            lock.lock();
            try {
                held.countDown();
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            } finally {
                lock.unlock();
            }
        });
        holder.start();
        try {
            assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
            Thread.currentThread().interrupt();
            assertThatThrownBy(lock::lockInterruptibly).isInstanceOf(InterruptedException.class);
        } finally {
            release.countDown();
            holder.join(10_000);
        }
        assertThat(timed("orders", "cancelled")).isEqualTo(1);

        TokenIssuer broken = (resource, timeout) -> {
            throw new LockAcquisitionException(resource, "lease table dropped", null, false);
        };
        FencedLockRegistry onBroken = new FencedLockRegistry(broken, "jobs:", FencingMetrics.noop())
                .observations(observations);
        assertThatThrownBy(() -> onBroken.obtain("1").lock()).isInstanceOf(LockAcquisitionException.class);
        assertThat(meters.get(FenceGuard.ACQUIRE_OBSERVATION).tag("resource", "jobs").tag("outcome", "failed")
                .tag("error", "LockAcquisitionException").timer().count()).isEqualTo(1);
    }

    @Test
    void asABeanItObservesInTheContextsRegistry() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(App.class)) {
            FencedLock lock = context.getBean(FencedLockRegistry.class).obtain(7);
            lock.lock();
            lock.unlock();
            MeterRegistry contextMeters = context.getBean(MeterRegistry.class);
            assertThat(contextMeters.get(FenceGuard.ACQUIRE_OBSERVATION).tag("resource", "ledger")
                    .tag("outcome", "acquired").timer().count()).isEqualTo(1);
        }
    }

    /** The metrics test's application, with an ObservationRegistry that times into its MeterRegistry. */
    @Configuration
    @Import(FencedLockMetricsTest.App.class)
    static class App {
        @Bean
        ObservationRegistry observationRegistry(MeterRegistry meters) {
            ObservationRegistry registry = ObservationRegistry.create();
            registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
            return registry;
        }
    }
}
