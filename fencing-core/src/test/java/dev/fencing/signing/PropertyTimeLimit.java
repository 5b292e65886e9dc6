package dev.fencing.signing;

import net.jqwik.api.lifecycle.AroundTryHook;
import net.jqwik.api.lifecycle.Lifespan;
import net.jqwik.api.lifecycle.Store;
import net.jqwik.api.lifecycle.TryExecutionResult;
import net.jqwik.api.lifecycle.TryExecutor;
import net.jqwik.api.lifecycle.TryLifecycleContext;

import java.time.Duration;
import java.util.List;

/**
 * The JUnit default timeout for jqwik properties, which Jupiter's timeout does not reach: once a property (its tries
 * and its shrinking) has run for {@link #LIMIT}, its next try fails instead of running. Each try here is bounded
 * in-memory work, so the property ends soon after the limit.
 */
final class PropertyTimeLimit implements AroundTryHook {

    static final Duration LIMIT = Duration.ofSeconds(90);

    @Override
    public TryExecutionResult aroundTry(TryLifecycleContext context, TryExecutor aTry, List<Object> parameters) {
        Store<Long> start = Store.getOrCreate(PropertyTimeLimit.class, Lifespan.PROPERTY, System::nanoTime);
        if (System.nanoTime() - start.get() > LIMIT.toNanos()) {
            return TryExecutionResult.falsified(new AssertionError("Property " + context.label()
                    + " ran longer than " + LIMIT + " and was stopped"));
        }
        return aTry.execute(parameters);
    }
}
