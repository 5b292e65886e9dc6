package dev.fencing.spring.support;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;

/**
 * The fence on the Spring proxy path: resolves the invoked method's fence point (cached) and runs the invocation
 * through the guard. No per-call reflection, parsing or meter lookup. Holds the shared {@link FencingSupport} only,
 * which looks up the store, issuer and meter registry on first use, so creating this interceptor (while bean
 * post-processors are registered) creates none of the application's beans.
 */
final class FencingInterceptor implements MethodInterceptor {

    private final FencingSupport support;

    FencingInterceptor(FencingSupport support) {
        this.support = support;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        // the target's own class: fence points are resolved against its user type once and cached per class; for a
        // target that is itself a JDK proxy (a Spring Data repository) that is the proxied interface, not $ProxyNN
        Class<?> targetClass = target != null ? target.getClass() : null;
        // an unbound method reference captures nothing: no per-call lambda (a captured invocation::proceed would
        // not always be scalar-replaced)
        return support.invoke(invocation.getMethod(), targetClass, invocation.getArguments(), invocation,
                MethodInvocation::proceed);
    }
}
