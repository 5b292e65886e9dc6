package dev.fencing.retention;

import dev.fencing.metrics.CompactionMetrics;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A run whose fence-store compaction committed its folds and whose issuer compaction then
 * failed counted nothing in {@code fencing.compaction.folded{state=fence}}: the folded resources were gone from the
 * store (and logged at INFO), and the counter that docs/metrics.md says counts them did not move (a red-team review).
 */
@Timeout(30)
class CompactionRunCountsTest {

    @Test
    void whatTheStoreFoldedIsCountedEvenWhenTheIssuersPartFails() throws Throwable {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        InMemoryFenceStore store = new InMemoryFenceStore();
        store.fence("accounts:1", new FencingToken("accounts:1", 5, "h"), () -> null);
        store.fence("accounts:2", new FencingToken("accounts:2", 7, "h"), () -> null);
        Thread.sleep(5);
        IssuerCompaction failingLeaseTable = (idleFor, batchSize) -> {
            throw new IllegalStateException("lease table unreachable");
        };
        CompactionRun run = new CompactionRun(store, IssuerFloors.ONE_SEQUENCE, failingLeaseTable,
                Duration.ofMillis(1), 100, new CompactionMetrics(registry));

        assertThatThrownBy(run::runOnce).hasMessageContaining("lease table unreachable");

        assertThat(store.size()).as("the store's part committed: both slots folded").isZero();
        assertThat(registry.get(CompactionMetrics.FOLDED).tag("state", "fence").counter().count())
                .as("fencing.compaction.folded{state=fence} after a run that folded 2 resources of the store")
                .isEqualTo(2);
        assertThat(registry.get(CompactionMetrics.RUNS).tag("outcome", "failed").counter().count()).isEqualTo(1);
    }
}
