package dev.fencing.metrics;

import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.guard.InvalidKeyException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** README promise: a failing meter never breaks the call; it runs, or is refused, exactly as it would. */
class FailingMeterTest {

    /** A registry whose every counter throws on increment. */
    static final class ThrowingRegistry extends SimpleMeterRegistry {
        final AtomicInteger attempts = new AtomicInteger();

        @Override
        protected Counter newCounter(Meter.Id id) {
            return new Counter() {
                @Override
                public void increment(double amount) {
                    attempts.incrementAndGet();
                    throw new IllegalStateException("meter backend down");
                }

                @Override
                public double count() {
                    return 0;
                }

                @Override
                public Id getId() {
                    return id;
                }
            };
        }
    }

    private final ThrowingRegistry registry = new ThrowingRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final FenceGuard guard = new FenceGuard(store, new InMemoryTokenIssuer(), Duration.ofMillis(50));
    private final FencePoint repo = new FencePoint("Repo.save(long)", "accounts", args -> args[0], "#id", false,
            metrics);
    private final FencePoint service = new FencePoint("Service.open(long)", "accounts", args -> args[0], "#id", true,
            metrics);
    private final List<String> ran = new ArrayList<>();

    @AfterEach
    void nothingLeaks() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void acceptedAndAcquiringCallsRunAndReturn() throws Throwable {
        Object result = guard.invoke(service, new Object[] {1L},
                () -> guard.invoke(repo, new Object[] {1L}, () -> ran.add("written")));
        assertThat(result).isEqualTo(true);
        assertThat(ran).containsExactly("written");
        assertThat(store.maxSeen("accounts:1")).isPresent();
        assertThat(registry.attempts.get()).isEqualTo(2); // acquired and accepted were both attempted
    }

    @Test
    void refusedCallsAreRefusedWithTheirOwnException() {
        store.raiseFloor("accounts:2", 10);
        assertThatThrownBy(() -> {
            try (var ignored = FencingContext.bind(new FencingToken("accounts:2", 5, "h"))) {
                guard.invoke(repo, new Object[] {2L}, () -> ran.add("stale"));
            }
        }).isInstanceOf(StaleTokenException.class);
        assertThatThrownBy(() -> guard.invoke(repo, new Object[] {2L}, () -> ran.add("missing")))
                .isInstanceOf(MissingTokenException.class);
        assertThatThrownBy(() -> guard.invoke(repo, new Object[] {null}, () -> ran.add("invalid")))
                .isInstanceOf(InvalidKeyException.class);
        var held = new InMemoryTokenIssuer();
        FenceGuard busyGuard = new FenceGuard(store, held, Duration.ZERO);
        held.acquire("accounts:3", Duration.ZERO);
        assertThatThrownBy(() -> busyGuard.invoke(service, new Object[] {3L}, () -> ran.add("unlocked")))
                .isInstanceOf(LockAcquisitionException.class);
        assertThat(ran).isEmpty();
        assertThat(registry.attempts.get()).isEqualTo(4);
    }
}
