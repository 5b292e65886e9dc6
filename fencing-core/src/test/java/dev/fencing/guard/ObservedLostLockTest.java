package dev.fencing.guard;

import dev.fencing.LogCapture;
import dev.fencing.context.FencingContext;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.mode.FenceMode;
import dev.fencing.mode.FenceModes;
import dev.fencing.mode.ObservedCalls;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.text.MessageFormat;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Observe mode and a lock this process knows is lost: enforce mode refuses such a check before the store, as stale,
 * with max_seen untouched ({@link LostLockTest}); observe mode must tell the same verdict ({@code stale},
 * {@code enforced=false}, recorded as refused) and let the call run outside the store's fence, as it does for every
 * other refusal. It sent the lost lock's token to the store instead: counted {@code accepted}, recorded as not
 * refused, and max_seen advanced by the zombie's token.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ObservedLostLockTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer(Duration.ofMillis(100), 0);
    private final FenceModes modes = new FenceModes(FenceMode.ENFORCE, Map.of("ledger", FenceMode.OBSERVE));
    private final FenceGuard guard = FenceGuard.builder(store).issuer(issuer).acquireTimeout(Duration.ofSeconds(5))
            .modes(modes).build();
    private final FencePoint service = new FencePoint("Service.transfer()", "ledger", null, null, true, metrics);
    private final FencePoint repository = new FencePoint("Repo.append()", "ledger", null, null, false, metrics);
    private final List<String> written = new ArrayList<>();

    @AfterEach
    void nothingStaysBound() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    private double observed(String outcome) {
        Counter counter = registry.find(FencingMetrics.CHECKS).tag("outcome", outcome)
                .tag(FencingMetrics.ENFORCED, "false").counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void aLostLockIsObservedAsStaleAndItsCallRunsOutsideTheStore() throws Throwable {
        long[] token = new long[1];
        guard.invoke(service, new Object[0], () -> {
            token[0] = FencingContext.current("ledger").value();
            Thread.sleep(150); // the lease runs out: this process knows the lock is lost
            // enforce mode would refuse this write as stale, before the store; observe mode lets it run
            guard.invoke(repository, new Object[0], () -> written.add("zombie"));
            return null;
        });
        assertThat(written).as("observe mode lets the call run").containsExactly("zombie");
        assertThat(observed("stale")).as("observed as the refusal enforce mode makes").isEqualTo(1);
        assertThat(observed("accepted")).isZero();
        assertThat(modes.observed().calls()).singleElement()
                .satisfies(call -> assertThat(call.count("stale")).isEqualTo(1));
        assertThat(store.maxSeen("ledger")).as("outside the store's fence, as every observed refusal: the zombie's "
                + "token %d must not become max_seen", token[0]).isEmpty();
    }

    /** Observe mode is where a lease too short for its calls shows: the line says the lock is known lost. */
    @Test
    void theObservedLineSaysTheLockIsKnownLost() throws Throwable {
        long[] token = new long[1];
        try (LogCapture log = LogCapture.of(ObservedCalls.class)) {
            guard.invoke(service, new Object[0], () -> {
                token[0] = FencingContext.current("ledger").value();
                Thread.sleep(150);
                guard.invoke(repository, new Object[0], () -> written.add("zombie"));
                return null;
            });
            assertThat(log.records()).singleElement().satisfies(line -> assertThat(
                    MessageFormat.format(line.getMessage(), line.getParameters())).contains("Repo.append()",
                    "(stale)", "'ledger'", "token " + token[0], "known lost here", "the store was not asked"));
        }
        assertThat(written).containsExactly("zombie");
    }

    /** The same lost lock in enforce mode, for comparison: refused before the store, max_seen untouched. */
    @Test
    void enforcedTheSameCallIsRefusedAndMaxSeenUntouched() throws Throwable {
        modes.set("ledger", FenceMode.ENFORCE, "test");
        Throwable[] refused = new Throwable[1];
        guard.invoke(service, new Object[0], () -> {
            Thread.sleep(150);
            try {
                guard.invoke(repository, new Object[0], () -> written.add("zombie"));
            } catch (StaleTokenException e) {
                refused[0] = e;
            }
            return null;
        });
        assertThat(refused[0]).isInstanceOfSatisfying(StaleTokenException.class,
                e -> assertThat(e.lockLost()).isTrue());
        assertThat(written).isEmpty();
        assertThat(store.maxSeen("ledger")).isEmpty();
    }
}
