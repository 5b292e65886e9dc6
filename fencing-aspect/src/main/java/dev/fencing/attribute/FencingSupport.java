package dev.fencing.attribute;

import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.FencedCall;

import java.lang.reflect.Method;
import java.util.Objects;

/**
 * What the Spring proxy interceptor and the woven AspectJ aspect share: find the fence point of the invoked method
 * (cached) and run the call through the guard, or straight through when the method is not fenced.
 */
public final class FencingSupport {

    private final FenceGuard guard;
    private final FencePointSource points;

    public FencingSupport(FenceGuard guard, FencingMetrics metrics) {
        this.guard = Objects.requireNonNull(guard, "guard");
        this.points = new FencePointSource(Objects.requireNonNull(metrics, "metrics"), guard);
    }

    /** Runs {@code call} under the fence of {@code method} on {@code targetClass} (if it has one). */
    public Object invoke(Method method, Class<?> targetClass, Object[] args, FencedCall<Object> call) throws Throwable {
        FencePoint point = points.pointFor(method, targetClass);
        if (point == null) {
            return call.proceed();
        }
        return guard.invoke(point, args, call);
    }

    /** The cached fence points. */
    public FencePointSource points() {
        return points;
    }

    public FenceGuard guard() {
        return guard;
    }
}
