package dev.fencing.guard;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.InMemoryFenceStore;
import io.micrometer.common.KeyValue;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An acquiring point's wait for its lock is an Observation named {@code fencing.acquire}: resource and outcome as
 * low-cardinality values, current while the issuer works, stopped before the fenced call runs, and never carrying the
 * issuer's message (an in-memory timeout names the holder).
 */
@Timeout(30)
class ObservedAcquisitionTest {

    private final StoppedObservations stopped = new StoppedObservations();
    private final List<StoppedObservations.Seen> seen = stopped.seen;
    private final ObservationRegistry observations = stopped.registry;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencePoint service = new FencePoint("Service.transfer(long)", "ledger", null, null, true,
            new FencingMetrics(registry));

    @Test
    void anAcquisitionIsObservedAndEndsBeforeTheCallRuns() throws Throwable {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        Observation[] duringAcquire = new Observation[1];
        TokenIssuer watched = (resource, timeout) -> {
            duringAcquire[0] = observations.getCurrentObservation();
            return issuer.acquire(resource, timeout);
        };
        FenceGuard guard = FenceGuard.builder(new InMemoryFenceStore()).issuer(watched)
                .observations(observations).build();
        List<StoppedObservations.Seen> stoppedBeforeCall = new ArrayList<>();
        Observation[] duringCall = new Observation[1];
        Object result = guard.invoke(service, new Object[0], () -> {
            stoppedBeforeCall.addAll(seen);
            duringCall[0] = observations.getCurrentObservation();
            return "ok";
        });

        assertThat(result).isEqualTo("ok");
        assertThat(duringAcquire[0]).as("current while the issuer works").isNotNull();
        assertThat(duringAcquire[0].getContext().getName()).isEqualTo(FenceGuard.ACQUIRE_OBSERVATION);
        assertThat(stoppedBeforeCall).as("stopped before the fenced call runs").hasSize(1);
        assertThat(duringCall[0]).as("not current during the call").isNull();
        StoppedObservations.Seen acquired = seen.get(0);
        assertThat(acquired.name()).isEqualTo("fencing.acquire");
        assertThat(acquired.contextualName()).isEqualTo("acquire ledger");
        assertThat(acquired.low()).containsExactlyInAnyOrderEntriesOf(
                Map.of("resource", "ledger", "outcome", "acquired"));
        assertThat(acquired.high()).containsEntry("fencing.resource", "ledger")
                .containsEntry("fencing.method", "Service.transfer(long)").containsEntry("fencing.token", "1");
        assertThat(acquired.error()).isNull();
    }

    @Test
    void aFailedAcquisitionIsObservedWithoutTheIssuersMessage() throws Throwable {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        FenceGuard guard = FenceGuard.builder(new InMemoryFenceStore()).issuer(issuer)
                .acquireTimeout(Duration.ofMillis(50)).observations(observations).build();
        try (Lease other = issuer.acquire("ledger", Duration.ofSeconds(1))) {
            String holder = other.token().holder();
            assertThatThrownBy(() -> guard.invoke(service, new Object[0], () -> "never"))
                    .isInstanceOf(LockAcquisitionException.class)
                    .hasMessageContaining(holder); // the caller's own answer names the holder
            StoppedObservations.Seen failed = seen.get(0);
            assertThat(failed.low()).containsEntry("resource", "ledger").containsEntry("outcome", "failed");
            assertThat(failed.high()).doesNotContainKey("fencing.token");
            assertThat(failed.error()).isInstanceOf(LockAcquisitionException.class)
                    .hasMessageNotContaining(holder)
                    .hasMessageContaining("ledger").hasMessageContaining("Service.transfer(long)")
                    .hasMessageContaining(LockAcquisitionException.class.getName());
        }
        assertThat(registry.get(FencingMetrics.ACQUISITIONS).tag("outcome", "failed").counter().count())
                .as("still counted").isEqualTo(1);
    }

    @Test
    void aWaitIsTimedAndShownAsActiveWithItsResourceOnly() throws Throwable {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        ObservationRegistry timed = ObservationRegistry.create();
        timed.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        List<Map<String, String>> waiting = new ArrayList<>();
        TokenIssuer watched = (resource, timeout) -> {
            meters.find(FenceGuard.ACQUIRE_OBSERVATION + ".active").longTaskTimers().forEach(t -> waiting.add(
                    t.getId().getTags().stream().collect(Collectors.toMap(Tag::getKey, Tag::getValue))));
            return issuer.acquire(resource, timeout);
        };
        FenceGuard guard = FenceGuard.builder(new InMemoryFenceStore()).issuer(watched).observations(timed).build();
        guard.invoke(service, new Object[0], () -> "ok");
        guard.invoke(service, new Object[0], () -> "ok");

        assertThat(waiting).containsExactly(Map.of("resource", "ledger"), Map.of("resource", "ledger"));
        assertThat(meters.get(FenceGuard.ACQUIRE_OBSERVATION).tag("outcome", "acquired").timer().count())
                .isEqualTo(2);
    }

    @Test
    void aBoundLocalLeaseIsReusedWithoutAnAcquisitionToObserve() throws Throwable {
        FenceGuard guard = FenceGuard.builder(new InMemoryFenceStore()).issuer(new InMemoryTokenIssuer())
                .observations(observations).build();
        guard.invoke(service, new Object[0], () -> guard.invoke(service, new Object[0], () -> "nested"));
        assertThat(seen).extracting(StoppedObservations.Seen::name).containsExactly(FenceGuard.ACQUIRE_OBSERVATION);
    }
}
