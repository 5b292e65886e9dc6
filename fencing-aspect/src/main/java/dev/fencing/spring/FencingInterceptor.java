package dev.fencing.spring;

import dev.fencing.attribute.FencingSupport;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;

/**
 * The fence on the Spring proxy path: resolves the invoked method's fence point (cached) and runs the invocation
 * through the guard. No per-call reflection, parsing or meter lookup.
 */
public final class FencingInterceptor implements MethodInterceptor {

    private final FencingSupport support;

    public FencingInterceptor(FencingSupport support) {
        this.support = support;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        // the target's own class: fence points are resolved against its user class once and cached per class
        Class<?> targetClass = target != null ? target.getClass() : null;
        return support.invoke(invocation.getMethod(), targetClass, invocation.getArguments(), invocation::proceed);
    }
}
