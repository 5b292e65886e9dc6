package dev.fencing.retention;

import dev.fencing.metrics.CompactionMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CompactionRunTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final AtomicInteger calls = new AtomicInteger();

    private FenceCompaction store(RuntimeException failure) {
        return new FenceCompaction() {
            @Override
            public CompactionResult compact(Duration idleFor, int batchSize, IssuerFloors issuer) {
                calls.incrementAndGet();
                if (failure != null) {
                    throw failure;
                }
                return new CompactionResult(batchSize + 1, 2, 1);
            }

            @Override
            public OptionalLong familyFloor(String family) {
                return OptionalLong.empty();
            }
        };
    }

    @Test
    void runOnceReturnsTheStoresResultAndCountsWhatWasFolded() {
        CompactionRun run = new CompactionRun(store(null), IssuerFloors.ONE_SEQUENCE, Duration.ofDays(1), 10,
                new CompactionMetrics(registry));
        assertThat(run.runOnce()).isEqualTo(new CompactionResult(11, 2, 1));
        assertThat(registry.get(CompactionMetrics.RUNS).tag("outcome", "ok").counter().count()).isEqualTo(1);
        assertThat(registry.get(CompactionMetrics.FOLDED).tag("state", "fence").counter().count()).isEqualTo(11);
    }

    @Test
    void theIssuersStateIsFoldedAfterTheStoresWithTheSameAgeAndBatch() {
        StringBuilder order = new StringBuilder();
        FenceCompaction fence = new FenceCompaction() {
            @Override
            public CompactionResult compact(Duration idleFor, int batchSize, IssuerFloors issuer) {
                order.append("fence;");
                return new CompactionResult(4, 1, 1);
            }

            @Override
            public OptionalLong familyFloor(String family) {
                return OptionalLong.empty();
            }
        };
        IssuerCompaction leases = (idleFor, batchSize) -> {
            order.append("issuer ").append(idleFor).append(' ').append(batchSize).append(';');
            return new CompactionResult(7, 1, 2);
        };
        CompactionRun run = new CompactionRun(fence, IssuerFloors.ONE_SEQUENCE, leases, Duration.ofHours(2), 50,
                new CompactionMetrics(registry));
        assertThat(run.runOnce()).isEqualTo(new CompactionResult(4, 1, 1));
        assertThat(order).hasToString("fence;issuer PT2H 50;");
        assertThat(registry.get(CompactionMetrics.FOLDED).tag("state", "fence").counter().count()).isEqualTo(4);
        assertThat(registry.get(CompactionMetrics.FOLDED).tag("state", "issuer").counter().count()).isEqualTo(7);
    }

    @Test
    void aFailureIsCountedAndThrownByRunOnceButOnlyLoggedByRun() {
        IllegalStateException down = new IllegalStateException("database down");
        CompactionRun run = new CompactionRun(store(down), IssuerFloors.ONE_SEQUENCE, Duration.ofDays(1), 10,
                new CompactionMetrics(registry));
        assertThatThrownBy(run::runOnce).isSameAs(down);
        run.run();
        assertThat(calls).hasValue(2);
        assertThat(registry.get(CompactionMetrics.RUNS).tag("outcome", "failed").counter().count()).isEqualTo(2);
        assertThat(registry.get(CompactionMetrics.RUNS).tag("outcome", "ok").counter().count()).isZero();
    }

    @Test
    void badAgeOrBatchIsRefusedNamingTheValue() {
        CompactionMetrics metrics = new CompactionMetrics(null);
        assertThatThrownBy(() -> new CompactionRun(store(null), IssuerFloors.ONE_SEQUENCE, Duration.ZERO, 10, metrics))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be positive, was PT0S");
        assertThatThrownBy(() -> new CompactionRun(store(null), IssuerFloors.ONE_SEQUENCE, Duration.ofDays(1), 0,
                metrics)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1, was 0");
        // idle-for=99999999d started, and every run failed on a timestamp out of range (a trial)
        assertThatThrownBy(() -> new CompactionRun(store(null), IssuerFloors.ONE_SEQUENCE,
                Duration.ofDays(99_999_999), 10, metrics)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most 36500 days, was PT2399999976H");
        new CompactionRun(store(null), IssuerFloors.ONE_SEQUENCE, Duration.ofDays(36_500), 10, metrics);
        assertThat(calls).hasValue(0);
    }

    @Test
    void familiesAreTheTextBeforeTheLastColon() {
        assertThat(ResourceFamily.of("accounts:42")).isEqualTo("accounts");
        assertThat(ResourceFamily.of("orders:eu:7")).isEqualTo("orders:eu");
        assertThat(ResourceFamily.of("ledger")).isNull();
        assertThat(ResourceFamily.of(":42")).isNull();
    }
}
