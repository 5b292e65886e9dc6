package dev.fencing.spring.support;

import dev.fencing.spring.support.FencePointSource.Resolution;

import java.lang.reflect.Method;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Where {@code @Fenced} applies, looked up once per target class and method and cached, with a sentinel for
 * methods it does not apply to. It needs no collaborators (no store, issuer or meter registry), so the PROXY-mode
 * pointcut can ask it while bean post-processors are still being registered; the startup validator and the
 * {@link FencePointSource}, which builds each fence point from the cached {@link Resolution} on first use, ask the
 * same instance, as Spring's {@code TransactionAttributeSourcePointcut} and {@code TransactionInterceptor} share
 * one {@code TransactionAttributeSource}. One per {@link FencingSupport}.
 */
final class FenceResolutions {

    private static final Object NONE = new Object();

    private final ClassValue<ConcurrentHashMap<Method, Object>> cache = new ClassValue<>() {
        @Override
        protected ConcurrentHashMap<Method, Object> computeValue(Class<?> type) {
            return new ConcurrentHashMap<>();
        }
    };

    /** Annotation lookups run, and results cached: equal unless two threads raced for one method. For tests. */
    final LongAdder lookups = new LongAdder();
    final LongAdder cached = new LongAdder();

    /**
     * Where {@code @Fenced} applies to {@code method} invoked on {@code targetClass}, or {@code null} when it does not
     * (static methods included); looked up on the first call for a class and method, then cached. Builds and
     * validates nothing: an invalid annotation is found here and refused when its fence point is built.
     *
     * @param targetClass the class of the target object, or {@code null} to use the method's declaring class
     */
    Resolution resolutionFor(Method method, Class<?> targetClass) {
        Class<?> type = targetClass != null ? targetClass : method.getDeclaringClass();
        ConcurrentHashMap<Method, Object> resolutions = cache.get(type);
        Object found = resolutions.get(method);
        if (found == null) {
            lookups.increment();
            Resolution resolution = FencePointSource.resolve(method, type);
            Object candidate = resolution == null ? NONE : resolution;
            Object raced = resolutions.putIfAbsent(method, candidate);
            if (raced == null) {
                cached.increment();
                found = candidate;
            } else {
                found = raced;
            }
        }
        return found == NONE ? null : (Resolution) found;
    }
}
