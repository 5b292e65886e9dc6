package dev.fencing.jdbc;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/** A fenced call through the core's guard with a meter registry of its own, as {@code @Fenced} would make it. */
final class Guarded {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FenceGuard guard;
    private final FencePoint point;

    /** Fences calls on {@code resource} (no key) with {@code store}. */
    Guarded(FenceStore store, String resource) {
        this.guard = new FenceGuard(store);
        this.point = new FencePoint("JdbcTest.write()", resource, null, null, false, new FencingMetrics(registry));
    }

    <T> T call(FencingToken token, FencedCall<T> call) throws Throwable {
        try (FencingScope ignored = FencingContext.bind(token)) {
            return guard.invoke(point, new Object[0], call);
        }
    }

    /** The {@code fencing.checks} count of {@code outcome}. */
    double checks(String outcome) {
        Counter counter = registry.find(FencingMetrics.CHECKS).tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }
}
