package dev.fencing.reactive;

import dev.fencing.guard.FencePoint;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.mode.FenceMode;
import dev.fencing.mode.FenceModes;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Observe mode and a lock this process knows is lost, on the reactive guard: enforce mode refuses such a check before
 * the store, as stale; observe mode must count and record that verdict ({@code stale}, {@code enforced=false}) and
 * let the call run outside the store's fence. It sent the lost lock's token to the store instead (counted
 * {@code accepted}, max_seen advanced by the zombie's token).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ReactiveObservedLostLockTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final InMemoryReactiveFenceStore store = new InMemoryReactiveFenceStore();
    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer(Duration.ofMillis(100), 0);
    private final FenceModes modes = new FenceModes(FenceMode.ENFORCE, Map.of("accounts", FenceMode.OBSERVE));
    private final ReactiveFenceGuard guard = ReactiveFenceGuard.builder(store)
            .issuer(ReactiveTokenIssuer.fromBlocking(issuer)).acquireTimeout(Duration.ofSeconds(5)).modes(modes)
            .build();
    private final FencePoint transfer = new FencePoint("Transfers.run()", "accounts", null, null, true, metrics);
    private final FencePoint save = new FencePoint("AccountRepository.save()", "accounts", null, null, false, metrics);

    private double observed(String outcome) {
        Counter counter = registry.find(FencingMetrics.CHECKS).tag("outcome", outcome)
                .tag(FencingMetrics.ENFORCED, "false").counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void aLostLockIsObservedAsStaleAndItsCallRunsOutsideTheStore() {
        List<String> written = new CopyOnWriteArrayList<>();
        StepVerifier.create(guard.fence(transfer, new Object[0], () -> Mono.delay(Duration.ofMillis(150))
                        .thenMany(guard.fence(save, new Object[0], () -> Mono.fromCallable(() -> {
                            written.add("zombie");
                            return "saved";
                        })))))
                .expectNext("saved").verifyComplete();
        assertThat(written).as("observe mode lets the call run").containsExactly("zombie");
        assertThat(observed("stale")).as("observed as the refusal enforce mode makes").isEqualTo(1);
        assertThat(observed("accepted")).isZero();
        assertThat(store.maxSeen("accounts")).as("outside the store's fence").isEmpty();
    }
}
