package dev.fencing.reactive;

import dev.fencing.context.MissingTokenException;
import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import io.micrometer.common.KeyValue;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With an ObservationRegistry, each reactive check and each wait for a lock is an Observation as in the blocking
 * guard: named fencing.check and fencing.acquire, resource and outcome as low-cardinality values, the parent the
 * observation in the subscriber's context, current (in the Reactor context) while the write runs, never the holder id.
 */
@Timeout(30)
class ReactiveObservationTest {

    record Seen(String name, Map<String, String> low, Map<String, String> high, Throwable error,
                Observation.Context parent) {
    }

    private final List<Seen> seen = new CopyOnWriteArrayList<>();
    private final ObservationRegistry observations = ObservationRegistry.create();

    {   // before the guard is built: a registry without handlers is a no-op, and the guard then observes nothing
        observations.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }

            @Override
            public void onStop(Observation.Context context) {
                seen.add(new Seen(context.getName(),
                        context.getLowCardinalityKeyValues().stream()
                                .collect(Collectors.toMap(KeyValue::getKey, KeyValue::getValue)),
                        context.getHighCardinalityKeyValues().stream()
                                .collect(Collectors.toMap(KeyValue::getKey, KeyValue::getValue)),
                        context.getError(),
                        context.getParentObservation() == null ? null
                                : (Observation.Context) context.getParentObservation().getContextView()));
            }
        });
    }
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final InMemoryReactiveFenceStore store = new InMemoryReactiveFenceStore();
    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
    private final ReactiveFenceGuard guard = ReactiveFenceGuard.builder(store)
            .issuer(ReactiveTokenIssuer.fromBlocking(issuer)).acquireTimeout(Duration.ofMillis(300))
            .observations(observations).build();
    private final FencePoint save = new FencePoint("AccountRepository.save()", "accounts", null, null, false, metrics);
    private final FencePoint transfer = new FencePoint("Transfers.run()", "accounts", null, null, true, metrics);


    private Flux<String> saveWith(FencingToken token, Mono<String> write) {
        return guard.fence(save, new Object[0], () -> write).contextWrite(ReactiveFencing.bind(token));
    }

    @Test
    void acceptedStaleAndMissingChecksAreObservedWithTheirOutcomes() {
        Observation[] current = new Observation[1];
        StepVerifier.create(saveWith(new FencingToken("accounts", 5, "a"), Mono.deferContextual(context -> {
            current[0] = context.getOrDefault(ReactiveFenceGuard.OBSERVATION_KEY, null);
            return Mono.just("ok");
        }))).expectNext("ok").verifyComplete();
        StepVerifier.create(saveWith(new FencingToken("accounts", 3, "zombie-holder"), Mono.just("stale")))
                .expectError(StaleTokenException.class).verify();
        StepVerifier.create(guard.fence(save, new Object[0], () -> Mono.just("missing")))
                .expectError(MissingTokenException.class).verify();

        assertThat(current[0]).as("the check's observation is current while the write runs").isNotNull();
        assertThat(current[0].getContext().getName()).isEqualTo(FenceGuard.OBSERVATION);
        assertThat(seen).extracting(Seen::name).containsOnly(FenceGuard.OBSERVATION);
        assertThat(seen).extracting(s -> s.low().get("outcome")).containsExactly("accepted", "stale", "missing");
        assertThat(seen.get(0).low()).containsEntry("resource", "accounts");
        assertThat(seen.get(0).high()).containsEntry("fencing.token", "5")
                .containsEntry("fencing.method", "AccountRepository.save()");
        assertThat(seen.get(1).error()).isInstanceOf(StaleTokenException.class)
                .hasMessageNotContaining("zombie-holder");
        assertThat(seen.get(2).high()).containsEntry("fencing.token", "none");
    }

    /** A key that names no entity is counted {@code invalid} and observed as such, as in the blocking guard. */
    @Test
    void anInvalidKeyIsObservedAsItIsCounted() {
        FencePoint keyed = new FencePoint("AccountRepository.save(String)", "accounts", args -> args[0], "#p0", false,
                metrics);
        StepVerifier.create(guard.fence(keyed, new Object[] {null}, () -> Mono.just("no entity"))
                        .contextWrite(ReactiveFencing.bind(new FencingToken("accounts:1", 5, "a"))))
                .expectError(dev.fencing.guard.InvalidKeyException.class).verify();
        assertThat(seen).singleElement().satisfies(s -> {
            assertThat(s.name()).isEqualTo(FenceGuard.OBSERVATION);
            assertThat(s.low()).containsEntry("outcome", "invalid").containsEntry("resource", "accounts");
            assertThat(s.high()).containsEntry("fencing.method", "AccountRepository.save(String)")
                    .containsEntry("fencing.token", "none");
            assertThat(s.error()).isInstanceOf(dev.fencing.guard.InvalidKeyException.class);
        });
        assertThat(registry.get("fencing.checks").tag("outcome", "invalid").counter().count()).isEqualTo(1);
    }

    @Test
    void theParentIsTheObservationInTheSubscribersContext() {
        Observation request = Observation.start("http.server.requests", observations);
        StepVerifier.create(saveWith(new FencingToken("accounts", 7, "a"), Mono.just("ok"))
                        .contextWrite(context -> context.put(ReactiveFenceGuard.OBSERVATION_KEY, request)))
                .expectNext("ok").verifyComplete();
        request.stop();
        assertThat(seen.get(0).name()).isEqualTo(FenceGuard.OBSERVATION);
        assertThat(seen.get(0).parent()).isSameAs(request.getContext());
    }

    @Test
    void aWaitForALockIsObservedAndATimeoutNamesNoHolder() {
        StepVerifier.create(guard.fence(transfer, new Object[0],
                () -> guard.fence(save, new Object[0], () -> Mono.just("saved")))).expectNext("saved")
                .verifyComplete();
        // an observation stops after its publisher's last signal reached the subscriber, on the issuer's thread
        Polling.until(() -> seen.size() == 2);
        assertThat(seen).extracting(Seen::name)
                .containsExactlyInAnyOrder(FenceGuard.ACQUIRE_OBSERVATION, FenceGuard.OBSERVATION);
        Seen acquired = seen.stream().filter(s -> s.name().equals(FenceGuard.ACQUIRE_OBSERVATION)).findFirst()
                .orElseThrow();
        assertThat(acquired.low()).containsEntry("outcome", "acquired").containsEntry("resource", "accounts");
        assertThat(acquired.high()).containsKey("fencing.token");

        seen.clear();
        try (Lease other = issuer.acquire("accounts", Duration.ofSeconds(1))) {
            String holder = other.token().holder();
            StepVerifier.create(guard.fence(transfer, new Object[0], () -> Mono.just("never")))
                    .expectError(LockAcquisitionException.class).verify();
            Polling.until(() -> !seen.isEmpty());
            assertThat(seen).singleElement().satisfies(failed -> {
                assertThat(failed.name()).isEqualTo(FenceGuard.ACQUIRE_OBSERVATION);
                assertThat(failed.low()).containsEntry("outcome", "failed");
                assertThat(failed.error()).isInstanceOf(LockAcquisitionException.class)
                        .hasMessageNotContaining(holder);
            });
        }
    }

    /**
     * A subscriber that leaves during the write leaves an accepted check (the counter's outcome too); one that leaves
     * while the lock is still awaited leaves a wait whose outcome is cancelled.
     */
    @Test
    void aSubscriberThatLeavesIsTheCountersOutcomeOrCancelled() {
        StepVerifier.create(saveWith(new FencingToken("accounts", 9, "a"), Mono.never()))
                .thenAwait(Duration.ofMillis(50)).thenCancel().verify();
        assertThat(seen).singleElement().satisfies(s -> assertThat(s.low()).containsEntry("outcome", "accepted"));

        seen.clear();
        try (Lease other = issuer.acquire("accounts", Duration.ofSeconds(1))) {
            StepVerifier.create(guard.fence(transfer, new Object[0], () -> Mono.just("never")))
                    .thenAwait(Duration.ofMillis(50)).thenCancel().verify();
            Polling.until(() -> !seen.isEmpty());
            assertThat(seen).singleElement().satisfies(s -> {
                assertThat(s.name()).isEqualTo(FenceGuard.ACQUIRE_OBSERVATION);
                assertThat(s.low()).containsEntry("outcome", "cancelled");
            });
        }
    }

    @Test
    void noRegistryNoObservation() {
        ReactiveFenceGuard plain = ReactiveFenceGuard.builder(store).observations(ObservationRegistry.NOOP).build();
        StepVerifier.create(plain.fence(save, new Object[0], () -> Mono.just("ok"))
                .contextWrite(ReactiveFencing.bind(new FencingToken("accounts", 11, "a")))).expectNext("ok")
                .verifyComplete();
        assertThat(seen).isEmpty();
    }
}
