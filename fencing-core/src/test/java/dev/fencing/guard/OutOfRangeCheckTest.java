package dev.fencing.guard;

import dev.fencing.metrics.FencingMetrics;
import dev.fencing.rule.OutOfRangeTokenException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.fencing.guard.Bound.bound;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A bounded store's refusal through the guard: its own outcome, named operation, nothing run, max_seen unchanged. */
class OutOfRangeCheckTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final InMemoryFenceStore store = new InMemoryFenceStore(1000);

    @Test
    void outOfRangeIsCountedAsItsOwnOutcomeAndTheNextRealHolderWrites() throws Throwable {
        FenceGuard guard = new FenceGuard(store);
        FencePoint repo = new FencePoint("Repo.write(String)", "r", null, null, false, new FencingMetrics(registry));
        List<String> applied = new ArrayList<>();

        bound(new FencingToken("r", 7, "a"), () -> guard.invoke(repo, new Object[0], () -> applied.add("7")));
        assertThatThrownBy(() -> bound(new FencingToken("r", Long.MAX_VALUE, "evil"),
                () -> guard.invoke(repo, new Object[0], () -> applied.add("forged"))))
                .isInstanceOfSatisfying(OutOfRangeTokenException.class, e -> {
                    assertThat(e.operation()).isEqualTo("Repo.write(String)");
                    assertThat(e.maxSeen()).isEqualTo(7);
                });
        bound(new FencingToken("r", 8, "b"), () -> guard.invoke(repo, new Object[0], () -> applied.add("8")));

        assertThat(applied).containsExactly("7", "8");
        assertThat(store.maxSeen("r")).hasValue(8);
        assertThat(registry.get("fencing.checks").tag("outcome", "out-of-range").counter().count()).isEqualTo(1);
        assertThat(registry.get("fencing.checks").tag("outcome", "stale").counter().count()).isZero();
    }
}
