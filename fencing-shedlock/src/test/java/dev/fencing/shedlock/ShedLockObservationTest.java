package dev.fencing.shedlock;

import dev.fencing.guard.FenceGuard;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A job's wait for its leases is observed as an acquiring method's wait is: {@code fencing.acquire} per resource,
 * tagged with the resource's family and the outcome, current while the issuer works; a lock ShedLock refused waits
 * for nothing and is not observed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShedLockObservationTest {

    private final MeterRegistry meters = new SimpleMeterRegistry();
    private final ObservationRegistry observations = ObservationRegistry.create();
    private final FakeLockProvider shedlock = new FakeLockProvider();
    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer(Duration.ofSeconds(30), 0);

    ShedLockObservationTest() {
        observations.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
    }

    private static LockConfiguration config(String name) {
        return new LockConfiguration(Instant.now(), name, Duration.ofSeconds(10), Duration.ZERO);
    }

    private long timed(String resource, String outcome) {
        Timer timer = meters.find(FenceGuard.ACQUIRE_OBSERVATION).tag("resource", resource).tag("outcome", outcome)
                .timer();
        return timer == null ? 0 : timer.count();
    }

    @Test
    void eachLeaseOfARunIsObservedUnderItsFamilyWhileTheIssuerWorks() {
        List<String> waitedFor = new ArrayList<>();
        TokenIssuer watched = (resource, timeout) -> {
            Observation current = observations.getCurrentObservation();
            waitedFor.add(current.getContext().getHighCardinalityKeyValue("fencing.resource").getValue() + " for "
                    + current.getContext().getHighCardinalityKeyValue("fencing.method").getValue());
            return issuer.acquire(resource, timeout);
        };
        FencingLockProvider provider = FencingLockProvider.builder(shedlock, watched).observations(observations)
                .resources("nightly", "ledger:eu", "accounts").build();

        provider.lock(config("nightly")).orElseThrow().unlock();

        assertThat(waitedFor).containsExactly("accounts for ShedLock job 'nightly'",
                "ledger:eu for ShedLock job 'nightly'");
        assertThat(timed("ledger", "acquired")).isEqualTo(1);
        assertThat(timed("accounts", "acquired")).isEqualTo(1);
        assertThat(observations.getCurrentObservation()).isNull();
    }

    @Test
    void aLeaseNotGrantedIsAFailedWaitAndALockShedLockRefusedIsNoWait() {
        FencingLockProvider provider = FencingLockProvider.builder(shedlock, issuer).observations(observations)
                .acquireTimeout(Duration.ofMillis(20)).build();
        try (Lease overrun = issuer.acquire("report", Duration.ZERO)) { // an earlier run's lease, still held
            assertThatThrownBy(() -> provider.lock(config("report"))).isInstanceOf(LockAcquisitionException.class);
        }
        assertThat(meters.get(FenceGuard.ACQUIRE_OBSERVATION).tag("resource", "report").tag("outcome", "failed")
                .tag("error", "LockAcquisitionException").timer().count()).isEqualTo(1);

        shedlock.held.add("report"); // another instance runs the job
        assertThat(provider.lock(config("report"))).isEmpty();
        assertThat(meters.find(FenceGuard.ACQUIRE_OBSERVATION).timers()).hasSize(1);
    }

    @Test
    void enableSchedulerLockFencingObservesInTheContextsRegistry() throws Exception {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
                SchedulerLockFencingStartupTest.Beans.class, SchedulerLockFencingStartupTest.Issuer.class,
                Observed.class)) {
            SchedulerLockFencingStartupTest.ReportJob job = context.getBean(
                    SchedulerLockFencingStartupTest.ReportJob.class);
            assertThat(job.ran().await(30, TimeUnit.SECONDS)).isTrue();
            MeterRegistry contextMeters = context.getBean(MeterRegistry.class);
            assertThat(contextMeters.get(FenceGuard.ACQUIRE_OBSERVATION).tag("resource", "reports")
                    .tag("outcome", "acquired").timer().count()).isPositive();
            assertThat(context.getBean(LockProvider.class)).isInstanceOf(FencingLockProvider.class);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    @EnableSchedulerLock(defaultLockAtMostFor = "PT10S")
    @EnableSchedulerLockFencing(resources = "report=reports", mappedOnly = true)
    static class Observed {
        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        ObservationRegistry observationRegistry(MeterRegistry meters) {
            ObservationRegistry registry = ObservationRegistry.create();
            registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
            return registry;
        }
    }
}
