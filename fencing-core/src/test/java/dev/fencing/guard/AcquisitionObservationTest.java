package dev.fencing.guard;

import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.token.FencingToken;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A wait for a lock by an acquirer other than the guard is observed as the guard observes one: named
 * {@code fencing.acquire}, current until closed, tagged with the given resource tag and one outcome, never carrying
 * the failure's message.
 */
@Timeout(30)
class AcquisitionObservationTest {

    private final StoppedObservations stopped = new StoppedObservations();

    @Test
    void anAcquiredWaitIsCurrentUntilClosedAndTaggedWithItsFamily() {
        Object during;
        try (AcquisitionObservation wait = AcquisitionObservation.start(stopped.registry, "orders", "orders:42",
                "FencedLockRegistry.lock()")) {
            during = stopped.registry.getCurrentObservation();
            wait.acquired(new FencingToken("orders:42", 7, "h"));
            assertThat(stopped.seen).as("stopped at close, not at the outcome").isEmpty();
        }
        assertThat(during).as("current while waiting").isNotNull();
        assertThat(stopped.registry.getCurrentObservation()).as("no longer current").isNull();
        StoppedObservations.Seen seen = stopped.seen.get(0);
        assertThat(seen.name()).isEqualTo(FenceGuard.ACQUIRE_OBSERVATION);
        assertThat(seen.contextualName()).isEqualTo("acquire orders");
        assertThat(seen.low()).containsExactlyInAnyOrderEntriesOf(Map.of("resource", "orders", "outcome", "acquired"));
        assertThat(seen.high()).containsEntry("fencing.resource", "orders:42")
                .containsEntry("fencing.method", "FencedLockRegistry.lock()").containsEntry("fencing.token", "7");
        assertThat(seen.error()).isNull();
    }

    @Test
    void aFailureIsRecordedByItsKindOnly() {
        LockAcquisitionException failure = new LockAcquisitionException("jobs", "held by holder-secret-1");
        try (AcquisitionObservation wait = AcquisitionObservation.start(stopped.registry, "jobs", "jobs",
                "ShedLock job 'nightly'")) {
            wait.failed(failure);
            wait.acquired(new FencingToken("jobs", 1, "h")); // a second outcome is ignored
        }
        StoppedObservations.Seen seen = stopped.seen.get(0);
        assertThat(seen.low()).containsEntry("outcome", "failed");
        assertThat(seen.high()).doesNotContainKey("fencing.token");
        assertThat(seen.error()).isInstanceOf(LockAcquisitionException.class)
                .hasMessageNotContaining("holder-secret-1").hasMessageContaining("ShedLock job 'nightly'")
                .hasMessageContaining("'jobs'");
    }

    @Test
    void anInterruptedWaitIsCancelledAndOneClosedWithNoOutcomeFailed() {
        try (AcquisitionObservation wait = AcquisitionObservation.start(stopped.registry, "a", "a", "x")) {
            wait.cancelled();
        }
        try (AcquisitionObservation ignored = AcquisitionObservation.start(stopped.registry, "b", "b", "x")) {
            // an Error thrown past the acquirer before it could tell the outcome
        }
        assertThat(stopped.seen).extracting(s -> s.low().get("outcome")).containsExactly("cancelled", "failed");
        assertThat(stopped.seen).extracting(StoppedObservations.Seen::error).containsOnlyNulls();
    }

    @Test
    void withoutARegistryNothingIsObserved() {
        try (AcquisitionObservation wait = AcquisitionObservation.start(null, "a", "a", "x")) {
            wait.acquired(null);
        }
        try (AcquisitionObservation wait = AcquisitionObservation.start(ObservationRegistry.NOOP, "a", "a", "x")) {
            assertThat(ObservationRegistry.NOOP.getCurrentObservation()).isNull();
            wait.failed(new IllegalStateException());
        }
        assertThat(stopped.seen).isEmpty();
    }
}
