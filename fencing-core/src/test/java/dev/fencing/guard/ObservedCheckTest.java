package dev.fencing.guard;

import dev.fencing.context.MissingTokenException;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.common.KeyValue;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import static dev.fencing.guard.Bound.bound;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Each check is an Observation named {@code fencing.check}: low-cardinality resource and outcome (the counter's),
 * the effective resource, method and token value as high-cardinality values, the error when it failed, and the
 * observation current while the write runs (so a span of the write is its child).
 */
class ObservedCheckTest {

    private final StoppedObservations stopped = new StoppedObservations();
    private final List<StoppedObservations.Seen> seen = stopped.seen;
    private final ObservationRegistry observations = stopped.registry;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencePoint repo = new FencePoint("Repo.write(String)", "accounts", null, null, false,
            new FencingMetrics(registry));

    @Test
    void everyOutcomeIsObservedWithTheCountersOutcome() throws Throwable {
        FenceGuard guard = FenceGuard.builder(new InMemoryFenceStore()).observations(observations).build();
        Observation[] current = new Observation[1];
        bound(new FencingToken("accounts", 5, "a"), () -> guard.invoke(repo, new Object[0], () -> {
            current[0] = observations.getCurrentObservation();
            return "ok";
        }));
        assertThatThrownBy(() -> bound(new FencingToken("accounts", 3, "zombie-holder"), () -> guard.invoke(repo,
                new Object[0], () -> "stale"))).isInstanceOf(StaleTokenException.class)
                .hasMessageContaining("zombie-holder"); // the caller's own answer names its holder
        assertThatThrownBy(() -> bound(new FencingToken("accounts", 5, "other-holder"), () -> guard.invoke(repo,
                new Object[0], () -> "duplicate"))).isInstanceOf(DuplicateTokenException.class);
        assertThatThrownBy(() -> guard.invoke(repo, new Object[0], () -> "missing"))
                .isInstanceOf(MissingTokenException.class);
        IllegalStateException thrown = new IllegalStateException("the write failed");
        assertThatThrownBy(() -> bound(new FencingToken("accounts", 6, "c"), () -> guard.invoke(repo,
                new Object[0], () -> {
                    throw thrown;
                }))).isSameAs(thrown);

        assertThat(current[0]).as("the check's observation is current while the write runs").isNotNull();
        assertThat(seen).extracting(StoppedObservations.Seen::name).containsOnly(FenceGuard.OBSERVATION);
        assertThat(seen).extracting(s -> s.low().get("outcome"))
                .containsExactly("accepted", "stale", "duplicate", "missing", "accepted");
        assertThat(seen).extracting(s -> s.low().keySet()).allSatisfy(keys ->
                assertThat(keys).containsExactlyInAnyOrder("resource", "outcome"));
        StoppedObservations.Seen accepted = seen.get(0);
        assertThat(accepted.low()).containsEntry("resource", "accounts");
        assertThat(accepted.contextualName()).isEqualTo("fence accounts");
        assertThat(accepted.high()).containsEntry("fencing.resource", "accounts")
                .containsEntry("fencing.method", "Repo.write(String)").containsEntry("fencing.token", "5")
                .doesNotContainValue("a");
        assertThat(accepted.error()).isNull();
        // the observation's error is the same refusal without the holder id (a span's exception event would carry it)
        assertThat(seen.get(1).error()).isInstanceOf(StaleTokenException.class)
                .hasMessageNotContaining("zombie-holder").hasMessageContaining("holder 'not-recorded'");
        assertThat(seen.get(2).error()).isInstanceOf(DuplicateTokenException.class)
                .hasMessageNotContaining("other-holder");
        assertThat(seen.get(3).high()).containsEntry("fencing.token", "none");
        assertThat(seen.get(4).error()).isSameAs(thrown);
        assertThat(registry.find("fencing.checks").tag("outcome", "accepted").counter().count()).isEqualTo(2);
    }

    /**
     * Every outcome {@code fencing.checks} counts is a {@code fencing.check} observation too (a dashboard adds the
     * timer's outcomes up to the counter's): the refusal of a token whose lock this process knows is lost, and a key
     * that names no entity, were counted but not observed.
     */
    @Test
    void aLostLockAndAnInvalidKeyAreObservedAsTheyAreCounted() throws Throwable {
        dev.fencing.issuer.InMemoryTokenIssuer issuer = new dev.fencing.issuer.InMemoryTokenIssuer(
                java.time.Duration.ofMillis(50), 0);
        FenceGuard guard = FenceGuard.builder(new InMemoryFenceStore()).issuer(issuer).observations(observations)
                .build();
        FencePoint service = new FencePoint("Service.transfer()", "accounts", null, null, true,
                new FencingMetrics(registry));
        assertThatThrownBy(() -> guard.invoke(service, new Object[0], () -> {
            Thread.sleep(120); // the lease ran out: this process knows its lock is lost
            return guard.invoke(repo, new Object[0], () -> "the zombie's write");
        })).isInstanceOf(StaleTokenException.class);
        FencePoint keyed = new FencePoint("Repo.save(String)", "accounts", new FenceBracketTest.ArgumentKey(0),
                "#p0", false, new FencingMetrics(registry));
        assertThatThrownBy(() -> guard.invoke(keyed, new Object[] {null}, () -> "no entity"))
                .isInstanceOf(InvalidKeyException.class);

        List<StoppedObservations.Seen> checks = seen.stream()
                .filter(s -> s.name().equals(FenceGuard.OBSERVATION)).toList();
        assertThat(checks).extracting(s -> s.low().get("outcome")).containsExactly("stale", "invalid");
        assertThat(checks.get(0).error()).isInstanceOf(StaleTokenException.class)
                .satisfies(e -> assertThat(((StaleTokenException) e).lockLost()).isTrue());
        assertThat(checks.get(0).high()).containsEntry("fencing.resource", "accounts")
                .containsEntry("fencing.method", "Repo.write(String)").containsKey("fencing.token");
        assertThat(checks.get(1).error()).isInstanceOf(InvalidKeyException.class);
        assertThat(checks.get(1).low()).containsEntry("resource", "accounts");
        assertThat(checks.get(1).high()).containsEntry("fencing.method", "Repo.save(String)")
                .containsEntry("fencing.token", "none");
        assertThat(registry.get("fencing.checks").tag("outcome", "stale").counter().count()).isEqualTo(1);
        assertThat(registry.get("fencing.checks").tag("outcome", "invalid").counter().count()).isEqualTo(1);
    }

    @Test
    void aRunningCheckIsTaggedWithItsResourceOnlyUntilItsOutcomeIsKnown() throws Throwable {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        ObservationRegistry timed = ObservationRegistry.create();
        timed.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
        FenceGuard guard = FenceGuard.builder(new InMemoryFenceStore()).observations(timed).build();
        List<Map<String, String>> running = new ArrayList<>();
        bound(new FencingToken("accounts", 5, "a"), () -> guard.invoke(repo, new Object[0], () -> {
            meters.find(FenceGuard.OBSERVATION + ".active").longTaskTimers().forEach(timer -> running.add(
                    timer.getId().getTags().stream().collect(Collectors.toMap(Tag::getKey, Tag::getValue))));
            return "ok";
        }));
        assertThat(running).as("the check's active timer while the write runs")
                .containsExactly(Map.of("resource", "accounts"));
        assertThat(meters.get(FenceGuard.OBSERVATION).tag("outcome", "accepted").timer().count()).isEqualTo(1);
        assertThat(meters.find(FenceGuard.OBSERVATION).tag("outcome", "error").timer()).isNull();
    }

    @Test
    void aNoopRegistryObservesNothing() throws Throwable {
        FenceGuard guard = FenceGuard.builder(new InMemoryFenceStore())
                .observations(ObservationRegistry.NOOP).build();
        bound(new FencingToken("accounts", 5, "a"), () -> guard.invoke(repo, new Object[0], () -> "ok"));
        assertThat(seen).isEmpty();
    }
}
